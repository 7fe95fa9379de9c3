// The subscriber's rows and state changes, over the SQL functions of
// supabase/migrations/20261123000110_subscriber_functions.sql and 20261124001010_store_operations.sql.
// Every backend only calls them by name (call-function.ts), so each rule and each row mapping
// exists once: in SQL, and in the parsers below.
import * as z from 'zod';
import { normalizeEmail } from '../../content/email-address.ts';
import type { CallFunction } from './call-function.ts';
import { rateLimitCount } from './rate-limit-counters.ts';
import {
  SUBSCRIBER_STATUSES,
  type Activation,
  type MergedSpelling,
  type RemovalReason,
  type SignupDecision,
  type SignupRequest,
  type SubscriberCounts,
  type SubscriberDetails,
  type SubscriberRecord,
  type SubscriberStatus,
  type SubscriberStore,
} from './types.ts';

/** The states each of the owner's own steps may start from (activate_subscriber's p_from). */
const ACTIVATE_FROM = {
  // The confirmation e-mail is the owner's word for a pending signup, and the only way back
  // for an address that bounced or complained.
  confirmation: ['pending', 'bounced', 'complained'],
  // Their own page's button, reached from a link mailed to them: only what the reader did can be
  // undone this way; a bounce or a complaint needs a fresh confirmation.
  resubscribe: ['unsubscribed', 'pending'],
} as const satisfies Record<string, readonly SubscriberStatus[]>;

const instant = z.string().transform((value) => new Date(value));
const maybeInstant = instant.nullable();
const status = z.enum(SUBSCRIBER_STATUSES);

const recordFields = { id: z.string(), email: z.string(), status, active: z.boolean(), created_at: instant };
const toRecord = (row: { id: string; email: string; status: SubscriberStatus; active: boolean; created_at: Date }): SubscriberRecord => ({
  id: row.id,
  email: row.email,
  status: row.status,
  active: row.active,
  createdAt: row.created_at,
});
const recordRow = z.object(recordFields).transform(toRecord);

const mergedSpellingRow = z
  .object({
    email: z.string(),
    created_at: maybeInstant.optional(),
    confirmed_at: maybeInstant.optional(),
    unsubscribed_at: maybeInstant.optional(),
    unsubscribe_reason: z.string().nullable().optional(),
    signup_ip_hash: z.string().nullable().optional(),
    confirm_ip_hash: z.string().nullable().optional(),
    merged_at: instant,
    deliveries: z.array(z.object({ recap_date: z.string(), sent_at: maybeInstant.optional() })),
  })
  .transform(
    (row): MergedSpelling => ({
      email: row.email,
      createdAt: row.created_at ?? null,
      confirmedAt: row.confirmed_at ?? null,
      leftAt: row.unsubscribed_at ?? null,
      leftReason: row.unsubscribe_reason ?? null,
      signupNetworkHash: row.signup_ip_hash ?? null,
      confirmNetworkHash: row.confirm_ip_hash ?? null,
      mergedAt: row.merged_at,
      deliveries: row.deliveries.map((d) => ({ recapDate: d.recap_date.slice(0, 10), sentAt: d.sent_at ?? null })),
    }),
  );

const detailsRow = z
  .object({
    ...recordFields,
    status_changed_at: instant,
    source: z.string().nullable(),
    resubscribed_at: maybeInstant,
    confirmed_at: maybeInstant,
    unsubscribed_at: maybeInstant,
    signup_ip_hash: z.string().nullable(),
    confirm_ip_hash: z.string().nullable(),
    welcomed_at: maybeInstant,
    origin: z.record(z.string(), z.string()).default({}),
    via_share: z.boolean().default(false),
    share_code: z.string().default(''),
    referrals: z.union([z.number(), z.string()]).transform(Number).default(0),
    first_active_at: maybeInstant.default(null),
    deliveries: z.array(z.object({ recap_date: z.string(), sent_at: instant })),
    // Absent from a database migrated before merged spellings were part of the answer.
    merged_spellings: z.array(mergedSpellingRow).default([]),
  })
  .transform(
    (row): SubscriberDetails => ({
      ...toRecord(row),
      statusChangedAt: row.status_changed_at,
      source: row.source,
      signedUpAt: row.resubscribed_at ?? row.created_at,
      confirmedAt: row.confirmed_at,
      leftAt: row.unsubscribed_at,
      signupNetworkHash: row.signup_ip_hash,
      confirmNetworkHash: row.confirm_ip_hash,
      welcomedAt: row.welcomed_at,
      origin: row.origin,
      viaShare: row.via_share,
      shareCode: row.share_code,
      referrals: row.referrals,
      firstActiveAt: row.first_active_at,
      deliveries: row.deliveries.map((d) => ({ recapDate: d.recap_date.slice(0, 10), sentAt: d.sent_at })),
      mergedSpellings: row.merged_spellings,
    }),
  );

const decisionRow = z
  .object({ id: z.union([z.string(), z.number()]), outcome: z.enum(['subscribed', 'already_subscribed', 'send_confirmation', 'nothing_to_send']) })
  .transform((row): SignupDecision => ({ subscriberId: String(row.id), outcome: row.outcome }));

/** signup_counted's answer: the counts it took and, within both limits, the decision. */
const countedRow = z.object({ network: z.unknown(), mailbox: z.unknown().optional(), decision: decisionRow.optional() });

const activationRow = z.object({ email: z.string(), status, activated: z.boolean() }).nullable();

function countsByStatus(counted: Partial<Record<string, number>>): SubscriberCounts {
  const byStatus = Object.fromEntries(SUBSCRIBER_STATUSES.map((s) => [s, Number(counted[s] ?? 0)])) as Record<SubscriberStatus, number>;
  const all = Object.values(byStatus).reduce((sum, n) => sum + n, 0);
  return { active: byStatus.active, inactive: all - byStatus.active, byStatus };
}

/** A page of subscribers in id order after `afterId`; only the active ones when `activeOnly`. */
export async function listSubscribers(call: CallFunction, afterId: string | null, limit: number, activeOnly: boolean): Promise<SubscriberRecord[]> {
  return z.array(recordRow).parse(await call('list_subscribers', { p_after: afterId, p_limit: limit, p_active_only: activeOnly }));
}

/** The signup's arguments as signup_decide (and signup_counted) take them. */
const signupArgs = (request: SignupRequest) => ({
  p_email: request.email,
  p_source: request.source,
  p_mode: request.mode,
  p_network_hash: request.networkHash,
  p_address_hashes: [...request.addressHashes],
  p_welcome: request.welcome === true,
  // Only when there is one: a database migrated before origins were kept has no such argument.
  ...(request.origin && Object.keys(request.origin).length > 0 ? { p_origin: request.origin } : {}),
});

/** The subscriber operations. */
export function subscriberStore(call: CallFunction): SubscriberStore {
  const find = async (name: string, args: Record<string, unknown>) => recordRow.nullable().parse(await call(name, args));

  return {
    signUp: async (request) => decisionRow.parse(await call('signup_decide', { ...signupArgs(request), p_owner: request.owner === true })),
    async signUpCounted(network, mailbox, request) {
      const answer = countedRow.parse(
        await call('signup_counted', {
          p_network_key: network.key,
          p_network_limit: network.limit,
          p_network_window_ms: Math.round(network.windowMs),
          p_mailbox_key: mailbox.key,
          p_mailbox_limit: mailbox.limit,
          p_mailbox_window_ms: Math.round(mailbox.windowMs),
          ...signupArgs(request),
        }),
      );
      return { network: rateLimitCount(answer.network)!, mailbox: rateLimitCount(answer.mailbox), decision: answer.decision ?? null };
    },
    async activateSubscriber(id, how, networkHash, welcome = false): Promise<Activation | null> {
      const args = { p_id: id, p_network_hash: networkHash, p_from: [...ACTIVATE_FROM[how]], p_confirmation: how === 'confirmation', p_welcome: welcome };
      return activationRow.parse(await call('activate_subscriber_welcome', args));
    },
    subscriberDetails: async (id) => detailsRow.nullable().parse(await call('subscriber_details', { p_id: id })),
    deleteSubscriber: async (id, addressHash) => status.nullable().parse(await call('delete_subscriber', { p_id: id, p_address_hash: addressHash })),
    findSubscriber: (id) => find('subscriber_by_id', { p_id: id }),
    findSubscriberByEmail: (email) => find('subscriber_by_email', { p_email: normalizeEmail(email) }),
    removeSubscriber: async (id, reason: RemovalReason) => (await call('mark_subscriber_left', { p_id: id, p_reason: reason })) === true,
    async suppressMailbox(addressHash, reason) {
      await call('suppress_mailbox', { p_address_hash: addressHash, p_reason: reason });
    },
    listAllSubscribers: (afterId, limit) => listSubscribers(call, afterId, limit, false),
    countSubscribers: async () => countsByStatus(z.record(z.string(), z.number()).parse(await call('count_subscribers', {}))),
  };
}
