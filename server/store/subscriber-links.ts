// Fresh links (server/link-tokens.ts) and the delete that forgets a subscriber, over the SQL
// functions of supabase/migrations/20261124003010_subscriber_links.sql, called by name through
// CallFunction like the digest's batches (digest-batches.ts).
import { z } from 'zod';
import type { CallFunction } from './digest-batches.ts';
import { SUBSCRIBER_STATUSES, type SubscriberStatus } from './types.ts';

/** Whether a fresh link can act: `used` once used, `revoked` when the state changed since, `gone` when deleted. */
export type LinkState = 'ok' | 'used' | 'revoked' | 'gone';

export interface LinkTarget {
  email: string;
  status: SubscriberStatus;
  linkVersion: number;
}

export interface LinkUse {
  subscriberId: string;
  version: number;
  nonce: string;
  expiresAt: Date;
}

export interface SubscriberLinkStore {
  /** What a fresh link for this subscriber is made from; null when there is none. */
  linkTarget(id: string): Promise<LinkTarget | null>;
  /** Whether the link could act now, without using it. */
  linkState(use: Omit<LinkUse, 'expiresAt'>): Promise<LinkState>;
  /** Uses the link (records its nonce) when it can act; says why not otherwise. */
  useLink(use: LinkUse): Promise<LinkState>;
  /** Uses a "Delete my data" link and deletes in one transaction; `status` is the state the row had. */
  deleteSubscriberByLink(use: LinkUse, addressHash: string): Promise<{ outcome: LinkState; status: SubscriberStatus | null }>;
  /**
   * Deletes the subscriber and every row that names it. When it had bounced or complained,
   * `addressHash` stays on the suppression list. Returns the state it had, or null.
   */
  deleteSubscriber(id: string, addressHash: string): Promise<SubscriberStatus | null>;
}

const linkState = z.enum(['ok', 'used', 'revoked', 'gone']);
const status = z.enum(SUBSCRIBER_STATUSES);
const target = z
  .object({ email: z.string(), status, link_version: z.number().int() })
  .nullable()
  .transform((row): LinkTarget | null => (row ? { email: row.email, status: row.status, linkVersion: row.link_version } : null));

const args = (use: LinkUse) => ({ p_id: use.subscriberId, p_version: use.version, p_nonce: use.nonce, p_expires_at: use.expiresAt.toISOString() });

export function subscriberLinkStore(call: CallFunction): SubscriberLinkStore {
  return {
    async linkTarget(id) {
      return target.parse(await call('subscriber_link_target', { p_id: id }));
    },
    async linkState(use) {
      return linkState.parse(await call('subscriber_link_state', { p_id: use.subscriberId, p_version: use.version, p_nonce: use.nonce }));
    },
    async useLink(use) {
      return linkState.parse(await call('use_subscriber_link', args(use)));
    },
    async deleteSubscriberByLink(use, addressHash) {
      const answer = z.object({ outcome: linkState, status: status.nullable() }).parse(await call('delete_subscriber_by_link', { ...args(use), p_address_hash: addressHash }));
      return answer;
    },
    async deleteSubscriber(id, addressHash) {
      return status.nullable().parse(await call('delete_subscriber', { p_id: id, p_address_hash: addressHash }));
    },
  };
}
