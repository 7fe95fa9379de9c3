// Fresh links (server/subscribers/link-tokens.ts) over the SQL functions of
// supabase/migrations/20261124003010_subscriber_links.sql, and the owner's confirmation links of
// 20261128006010_owner_confirmations.sql, called by name through CallFunction.
// (deleteSubscriber is in subscribers.ts; that migration makes a delete forget every row naming it.)
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

// The states of types.ts's SubscriberStatus, spelled here so this module needs nothing from types.ts.
const STATUSES = ['pending', 'active', 'unsubscribed', 'bounced', 'complained'] as const;
type SubscriberStatus = (typeof STATUSES)[number];

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
  /**
   * Queues a fresh link in the mail outbox, made for the subscriber's link version now; false when
   * there is no such subscriber.
   */
  requestLink(id: string, purpose: 'download' | 'delete' | 'resubscribe', nonce: string, expiresAt: Date): Promise<boolean>;
  /** What a fresh link for this subscriber is made from; null when there is none. */
  linkTarget(id: string): Promise<LinkTarget | null>;
  /** Whether the link could act now, without using it. */
  linkState(use: Omit<LinkUse, 'expiresAt'>): Promise<LinkState>;
  /** Uses the link (records its nonce) when it can act; says why not otherwise. */
  useLink(use: LinkUse): Promise<LinkState>;
  /** Uses a "Delete my data" link and deletes in one transaction; `status` is the state the row had. */
  deleteSubscriberByLink(use: LinkUse, addressHash: string): Promise<{ outcome: LinkState; status: SubscriberStatus | null }>;
  /**
   * The confirmation button of a link made for link version `version` (undefined: a link mailed
   * before versions, which confirms a pending row only). Activates from pending, bounced or
   * complained; `refused` when the row changed state since the link was made. With `welcome`, an
   * address this makes active has its welcome queued in the same transaction. Null when there is
   * no such subscriber.
   */
  confirmByLink(id: string, version: number | undefined, networkHash: string | null, welcome: boolean): Promise<LinkConfirmation | null>;
  /**
   * Double mode's "Subscribe again" on the owner's own page, for an unsubscribed or pending row:
   * pending again with a confirmation queued (`sent`), always for an address that confirmed before;
   * for one that never did, the 24-hour throttles per row and per mailbox (`mailboxHash`) hold, and
   * a throttled ask changes nothing. `unchanged` for any other state. Null when there is no such row.
   */
  resubscribeByOwner(id: string, networkHash: string | null, mailboxHash: string): Promise<OwnerResubscribe | null>;
}

export interface LinkConfirmation {
  email: string;
  status: SubscriberStatus;
  activated: boolean;
  refused: boolean;
}

export interface OwnerResubscribe {
  outcome: 'sent' | 'throttled' | 'unchanged';
  status: SubscriberStatus;
}

const linkState = z.enum(['ok', 'used', 'revoked', 'gone']);
const status = z.enum(STATUSES);
const target = z
  .object({ email: z.string(), status, link_version: z.number().int() })
  .nullable()
  .transform((row): LinkTarget | null => (row ? { email: row.email, status: row.status, linkVersion: row.link_version } : null));

const confirmation = z.object({ email: z.string(), status, activated: z.boolean(), refused: z.boolean() }).nullable();
const ownerResubscribe = z.object({ outcome: z.enum(['sent', 'throttled', 'unchanged']), status }).nullable();

const args = (use: LinkUse) => ({ p_id: use.subscriberId, p_version: use.version, p_nonce: use.nonce, p_expires_at: use.expiresAt.toISOString() });

export function subscriberLinkStore(call: CallFunction): SubscriberLinkStore {
  return {
    async requestLink(id, purpose, nonce, expiresAt) {
      return (await call('request_subscriber_link', { p_id: id, p_purpose: purpose, p_nonce: nonce, p_expires_at: expiresAt.toISOString() })) === true;
    },
    async linkTarget(id) {
      return target.parse(await call('subscriber_link_target', { p_id: id }));
    },
    async linkState(use) {
      return linkState.parse(await call('subscriber_link_state', { p_id: use.subscriberId, p_version: use.version, p_nonce: use.nonce }));
    },
    async useLink(use) {
      return linkState.parse(await call('use_subscriber_link', args(use)));
    },
    async confirmByLink(id, version, networkHash, welcome) {
      return confirmation.parse(await call('confirm_subscriber_link', { p_id: id, p_version: version ?? null, p_network_hash: networkHash, p_welcome: welcome }));
    },
    async resubscribeByOwner(id, networkHash, mailboxHash) {
      return ownerResubscribe.parse(await call('resubscribe_by_owner', { p_id: id, p_network_hash: networkHash, p_mailbox_hash: mailboxHash }));
    },
    async deleteSubscriberByLink(use, addressHash) {
      return z.object({ outcome: linkState, status: status.nullable() }).parse(await call('delete_subscriber_by_link', { ...args(use), p_address_hash: addressHash }));
    },
  };
}
