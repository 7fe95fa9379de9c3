// The subscriber's rows and state changes, over the SQL functions of
// supabase/migrations/20261123000110_subscriber_functions.sql and 20261124001010_store_operations.sql.
// Every backend only calls them by name (call-function.ts), so each rule and each row mapping
// exists once: in SQL, and in the parsers below.
import * as z from 'zod';
import { normalizeEmail } from '../../content/email-address.ts';
import type { CallFunction } from './call-function.ts';
import { SignupBatcher, type SignupRow } from './signup-batcher.ts';
import {
  StoreUnavailableError,
  SUBSCRIBER_STATUSES,
  type Activation,
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

/**
 * Signup statements in flight at once on PostgreSQL (signup-batcher.ts): signups that arrive while
 * they run join the next one. Measured with `npm run bench -- signup` (every defence on, 50
 * connections, a 2-core machine shared with other work, one run each): 1 in flight 3,479 signups/s,
 * 2 → 3,544, 3 → 5,444, 5 → 5,380. With one, each signup waited for the statement before its own
 * to commit; with three, the database works on one while the next is on its way. The embedded
 * database runs one statement at a time anyway (SIGNUP_STATEMENTS_IN_FLIGHT_EMBEDDED).
 */
export const SIGNUP_STATEMENTS_IN_FLIGHT = 3;
export const SIGNUP_STATEMENTS_IN_FLIGHT_EMBEDDED = 1;

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
    deliveries: z.array(z.object({ recap_date: z.string(), sent_at: instant })),
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
      deliveries: row.deliveries.map((d) => ({ recapDate: d.recap_date.slice(0, 10), sentAt: d.sent_at })),
    }),
  );

const decisionRow = z
  .object({ id: z.union([z.string(), z.number()]), outcome: z.enum(['subscribed', 'already_subscribed', 'send_confirmation', 'nothing_to_send']) })
  .transform((row): SignupDecision => ({ subscriberId: String(row.id), outcome: row.outcome }));

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

/**
 * The subscriber operations. `signupStatementsInFlight`: single-mode signups that arrive together
 * are written as one statement (signup-batcher.ts), up to that many statements at once, for a
 * backend where a round trip costs more than a row; 0 writes each signup on its own.
 */
export function subscriberStore(call: CallFunction, { signupStatementsInFlight }: { signupStatementsInFlight: number }): SubscriberStore {
  const decide = async (request: SignupRequest) =>
    decisionRow.parse(
      await call('signup_subscriber_welcome', {
        p_email: request.email,
        p_source: request.source,
        p_mode: request.mode,
        p_network_hash: request.networkHash,
        p_address_hashes: [...request.addressHashes],
        p_welcome: request.welcome === true,
      }),
    );
  const many = async (rows: readonly SignupRow[]) => {
    const activated = await call('signup_subscribers_many', {
      p_emails: rows.map((row) => row.email),
      p_sources: rows.map((row) => row.source),
      p_network_hashes: rows.map((row) => row.networkHash),
      // Every hash of every row (the mailbox's and any older ones), as JSON: [[…], […], …].
      p_address_hashes: rows.map((row) => [...row.addressHashes]),
    });
    return new Map(Object.entries(z.record(z.string(), z.string()).parse(activated)));
  };
  // A lone single-mode signup: the same plain insert as a group (the common case, a new address,
  // costs one cheap statement); only a row it does not activate goes to the signup function.
  const one = async (row: SignupRow): Promise<SignupDecision> => {
    const id = (await many([row])).get(row.email);
    return id === undefined ? decide(row) : { outcome: 'subscribed', subscriberId: id };
  };
  const batcher =
    signupStatementsInFlight > 0
      ? new SignupBatcher({ one, decide, many, isUnavailable: (error) => error instanceof StoreUnavailableError }, signupStatementsInFlight)
      : null;
  const find = async (name: string, args: Record<string, unknown>) => recordRow.nullable().parse(await call(name, args));

  return {
    // Double mode (and the rarer cases of single mode) need the function's decisions; single
    // mode's common case, a new address, is group-committed where the backend batches (unless its
    // welcome is to be queued in the same transaction: signup_subscriber_welcome does that).
    signUp: (request) => (batcher && request.mode === 'single' && !request.welcome ? batcher.add(request) : decide(request)),
    async activateSubscriber(id, how, networkHash, welcome = false): Promise<Activation | null> {
      const args = { p_id: id, p_network_hash: networkHash, p_from: [...ACTIVATE_FROM[how]], p_confirmation: how === 'confirmation', p_welcome: welcome };
      return activationRow.parse(await call('activate_subscriber_welcome', args));
    },
    subscriberDetails: async (id) => detailsRow.nullable().parse(await call('subscriber_details', { p_id: id })),
    deleteSubscriber: async (id, addressHash) => status.nullable().parse(await call('delete_subscriber', { p_id: id, p_address_hash: addressHash })),
    findSubscriber: (id) => find('subscriber_by_id', { p_id: id }),
    findSubscriberByEmail: (email) => find('subscriber_by_email', { p_email: normalizeEmail(email) }),
    removeSubscriber: async (id, reason: RemovalReason) => (await call('mark_subscriber_left', { p_id: id, p_reason: reason })) === true,
    listAllSubscribers: (afterId, limit) => listSubscribers(call, afterId, limit, false),
    countSubscribers: async () => countsByStatus(z.record(z.string(), z.number()).parse(await call('count_subscribers', {}))),
  };
}
