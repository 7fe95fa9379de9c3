// Store operations only tests need: the shipped Store leaves them out. They go through
// the same named SQL functions as the store itself, so they behave alike on every backend.
import { storeFunctions } from '../../server/store/operations.ts';
import { listSubscribers } from '../../server/store/subscribers.ts';
import type { CallFunction } from '../../server/store/call-function.ts';
import type { Delivery, Store, Subscriber, SubscriberRecord } from '../../server/store/types.ts';

function functionsOf(store: Store): CallFunction {
  const call = storeFunctions(store);
  if (!call) throw new Error('not a store over SQL functions');
  return call;
}

/**
 * Adds an address (already normalised and validated) in single mode: a new address or one that had
 * left becomes an active subscriber; anything else is reported as already there.
 */
export async function addSignup(store: Store, email: string, source: string | null): Promise<'subscribed' | 'already_subscribed'> {
  const decision = await store.signUp({ email, source, mode: 'single', networkHash: null, addressHashes: [] });
  return decision.outcome === 'subscribed' ? 'subscribed' : 'already_subscribed';
}

/** Active subscribers in a stable order (by id), `limit` at a time after `afterId`, as the digest has them (with their share codes). */
export async function listActiveSubscribers(store: Store, afterId: string | null, limit: number): Promise<Subscriber[]> {
  const records = await listSubscribers(functionsOf(store), afterId, limit, true);
  const codes = new Map((await store.digestRecipients(records.map((r) => r.id))).map((r) => [r.id, r.shareCode]));
  return records.map(({ id, email }) => ({ id, email, ...(codes.get(id) ? { shareCode: codes.get(id)! } : {}) }));
}

/** Of the given subscribers, those that already have a delivery for this recap. */
export async function deliveredTo(store: Store, recapDate: string, subscriberIds: readonly string[]): Promise<Set<string>> {
  if (subscriberIds.length === 0) return new Set();
  const ids = (await functionsOf(store)('digest_delivered_to', { p_recap_date: recapDate, p_subscriber_ids: subscriberIds })) as string[];
  return new Set(ids);
}

/** Records accepted messages outside a batch; an existing row for the same recap and subscriber is kept. */
export async function recordDeliveries(store: Store, recapDate: string, deliveries: readonly Delivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const rows = deliveries.map((d) => ({ id: d.subscriberId, provider_id: d.providerMessageId }));
  await functionsOf(store)('digest_record_deliveries', { p_recap_date: recapDate, p_deliveries: rows });
}

/**
 * Gives back the confirmation throttle a signup claimed (the row's, and the mailbox's when this row
 * claimed it). The outbox does this in SQL when a confirmation fails for good; tests call it directly.
 */
export async function releaseConfirmation(store: Store, id: string, mailboxHash: string | null = null): Promise<void> {
  await functionsOf(store)('release_confirmation', { p_id: id, p_mailbox_hash: mailboxHash });
}

/** Marks the welcome e-mail as due, once per address ever: true only for the first caller, and only while active. */
export async function claimWelcome(store: Store, id: string): Promise<boolean> {
  return (await functionsOf(store)('claim_welcome', { p_id: id })) === true;
}

/** Every row on the list, whatever its state, read page by page as the CLI's export reads it. */
export async function allSubscriberRecords(store: Pick<Store, 'listAllSubscribers'>): Promise<SubscriberRecord[]> {
  const records: SubscriberRecord[] = [];
  for (let after: string | null = null; ; ) {
    const page = await store.listAllSubscribers(after, 1000);
    if (page.length === 0) return records;
    records.push(...page);
    after = page.at(-1)!.id;
  }
}
