// Planning, writing, sending and settling single batches on a real embedded store, against the
// local Resend stand-in: each part alone, as the job strings them together.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recaps } from '../../../content/index.ts';
import { prepareDigest } from '../templates/render-digest.ts';
import { ResendMailer } from '../resend.ts';
import { openPGliteStore } from '../../store/pglite.ts';
import type { DigestContent, Store, Subscriber } from '../../store/types.ts';
import { startFakeResend, type FakeResend } from '../../../tests/support/fake-resend.ts';
import { digestContentOf, messageFrom } from './content.ts';
import { candidateGroups } from './plan.ts';
import { RunTally } from './run-report.ts';
import { DEFAULT_DELIVERY_POLICY, longestRetryBudgetMs, MAX_REQUEST_TIMEOUT_MS } from '../delivery-policy.ts';
import { LAST_ATTEMPT_AGE_MS, PROVIDER_IDEMPOTENCY_WINDOW_MS, REPEAT_SAFETY_MARGIN_MS, sendAndRecord, settleOpenBatches, type BatchContext } from './send-batch.ts';
import { addSignup, deliveredTo, listActiveSubscribers } from '../../../tests/support/store-ops.ts';

const SECRET = 'send-batch-test-secret-0123456789abcdef0123456789';
const FROM = 'Launched Weekly <digest@launchedweekly.test>';
const RECAP = recaps.find((r) => r.date === '2025-07-14')!;

let store: Store;
let fake: FakeResend;
let content: DigestContent;

const mailer = () => new ResendMailer({ apiKey: 're_test_unit', baseUrl: fake.url, from: FROM, policy: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 } });
const context = (overrides: Partial<BatchContext> = {}): BatchContext => ({ store, mailer: mailer(), unsubscribeSecret: SECRET, now: () => new Date(), tally: new RunTally(), pause: async () => {}, ...overrides });

async function firstGroup(size: number): Promise<Subscriber[]> {
  const next = await candidateGroups(store, RECAP.date, size).next();
  return next.done ? [] : next.value;
}

async function writeFirst(size: number, createdAt = new Date()) {
  const group = await firstGroup(size);
  const batch = (await store.writeDigestBatch({ recapDate: RECAP.date, runId: null, idempotencyKey: `unit-${Math.random()}`, contentHash: content.contentHash, subscriberIds: group.map((s) => s.id), createdAt }))!;
  return { batch, messages: group.map((s) => messageFrom(content, s, SECRET)) };
}

beforeAll(async () => {
  store = await openPGliteStore(null);
  for (let i = 1; i <= 16; i++) await addSignup(store, `reader${String(i).padStart(2, '0')}@example.com`, '/');
  fake = await startFakeResend();
  content = digestContentOf(await prepareDigest(RECAP, 'https://lw.test'), FROM, 'https://lw.test', SECRET);
  await store.saveDigestContent(content);
});
afterAll(async () => {
  await fake.close();
  await store.close();
});
beforeEach(async () => {
  // Each test starts from whatever the last left open closed.
  for (const open of await store.openDigestBatches(RECAP.date)) await store.settleDigestBatch(open.id, { state: 'skipped', at: new Date() });
  fake.serverErrors = 0;
});

describe('candidateGroups', () => {
  it('gives active subscribers without the recap, in id order, a batch at a time, across pages', async () => {
    const everyone = await listActiveSubscribers(store, null, 100);
    const groups = [];
    for await (const group of candidateGroups(store, '2025-01-05', 5, 4)) groups.push(group.map((s) => s.id));
    expect(groups.map((g) => g.length)).toEqual([5, 5, 5, 1]);
    expect(groups.flat()).toEqual(everyone.map((s) => s.id));
  });
});

describe('sendAndRecord', () => {
  it('closes the batch with its ledger rows once the provider accepted it', async () => {
    const ctx = context();
    const { batch, messages } = await writeFirst(3);
    expect(await sendAndRecord(ctx, batch, messages)).toBeNull();
    expect(ctx.tally.sent).toBe(3);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'sent', providerIds: [expect.any(String), expect.any(String), expect.any(String)] });
    expect(await deliveredTo(store, RECAP.date, batch.subscriberIds)).toEqual(new Set(batch.subscriberIds));
  });

  it('leaves the batch pending (it may have gone out) and stops when the provider keeps failing', async () => {
    const ctx = context();
    const { batch, messages } = await writeFirst(2);
    fake.serverErrors = 10;
    expect(await sendAndRecord(ctx, batch, messages)).toMatch(/the provider kept failing: internal_server_error/);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'pending' });
    expect(await deliveredTo(store, RECAP.date, batch.subscriberIds)).toEqual(new Set());
  });

  it('closes a new batch as failed when every attempt was rate limited: nothing went out, and its readers go into a new batch under a new key', async () => {
    const ctx = context();
    const { batch, messages } = await writeFirst(2);
    // Asked to wait an hour: longer than the policy waits, so the call gives up after the first 429.
    fake.rateLimitStorm = 10;
    fake.stormRetryAfterSeconds = 3600;
    try {
      expect(await sendAndRecord(ctx, batch, messages, batch.idempotencyKey, { since: batch.createdAt, state: 'pending', justWritten: true })).toMatch(/the provider kept failing: rate_limit_exceeded/);
    } finally {
      fake.rateLimitStorm = 0;
      fake.stormRetryAfterSeconds = 1;
    }
    expect(fake.requests.at(-1)?.status).toBe(429);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'failed' });
    expect(await deliveredTo(store, RECAP.date, batch.subscriberIds)).toEqual(new Set());
    const again = await store.writeDigestBatch({ recapDate: RECAP.date, runId: null, idempotencyKey: `unit-${Math.random()}`, contentHash: content.contentHash, subscriberIds: batch.subscriberIds, createdAt: new Date() });
    expect(again?.subscriberIds).toEqual(batch.subscriberIds);
  });

  it('leaves a new batch pending when an attempt may have gone through (a server error)', async () => {
    const { batch, messages } = await writeFirst(2);
    fake.serverErrors = 10;
    expect(await sendAndRecord(context(), batch, messages, batch.idempotencyKey, { since: batch.createdAt, state: 'pending', justWritten: true })).toMatch(/the provider kept failing: internal_server_error/);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'pending' });
  });

  it('makes the batch unknown, not failed, when the provider refuses its key for another body (409)', async () => {
    const { batch, messages } = await writeFirst(2);
    expect(await sendAndRecord(context(), batch, messages)).toBeNull();
    const other = (await store.writeDigestBatch({ recapDate: RECAP.date, runId: null, idempotencyKey: batch.idempotencyKey.replace('unit', 'other'), contentHash: content.contentHash, subscriberIds: (await firstGroup(1)).map((s) => s.id), createdAt: new Date() }))!;
    const ctx = context();
    const reused = { ...other, idempotencyKey: batch.idempotencyKey };
    expect(await sendAndRecord(ctx, reused, [messageFrom(content, { id: other.subscriberIds[0]!, email: 'someone@example.com' }, SECRET)])).toBeNull();
    expect(ctx.tally.failedTotal()).toBe(0);
    expect(ctx.tally.unknown).toEqual([expect.objectContaining({ id: other.id, reason: expect.stringContaining('invalid_idempotent_request') })]);
    expect(await store.findDigestBatch(other.id)).toMatchObject({ state: 'unknown' });
  });
});

describe('settleOpenBatches', () => {
  it('repeats a pending batch with its stored key inside the window: the provider answers from its cache', async () => {
    const { batch, messages } = await writeFirst(2);
    await mailer().sendBatch(messages, { idempotencyKey: batch.idempotencyKey }); // went out; the answer was lost
    const before = fake.messages.length;
    const ctx = context();
    expect(await settleOpenBatches(ctx, RECAP.date)).toBeNull();
    expect(fake.messages.length).toBe(before);
    expect(fake.requests.at(-1)).toMatchObject({ idempotencyKey: batch.idempotencyKey, kind: 'replayed' });
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'sent' });
  });

  it('sends nothing for a batch older than the provider’s window and reports it unknown', async () => {
    const { batch } = await writeFirst(2, new Date(Date.now() - PROVIDER_IDEMPOTENCY_WINDOW_MS - 60_000));
    // Its first attempt left (and its answer was lost): the key may have been used.
    expect(await store.beginDigestBatchAttempt(batch.id, batch.createdAt)).toBe('pending');
    const requests = fake.requests.length;
    const ctx = context();
    expect(await settleOpenBatches(ctx, RECAP.date)).toBeNull();
    expect(fake.requests.length).toBe(requests);
    expect(ctx.tally.unknown).toEqual([expect.objectContaining({ id: batch.id, recipients: 2, settle: { send: `npm run digest -- --settle ${batch.id} send`, skip: `npm run digest -- --settle ${batch.id} skip` } })]);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'unknown' });
    // Still open: the next settle reports it again and its members are planned into nothing new.
    const again = context();
    await settleOpenBatches(again, RECAP.date);
    expect(again.tally.unknown.map((u) => u.id)).toEqual([batch.id]);
    const planned = [];
    for await (const group of candidateGroups(store, RECAP.date, 100)) planned.push(...group.map((s) => s.id));
    expect(planned.some((id) => batch.subscriberIds.includes(id))).toBe(false);
  });

  it('closes a batch no attempt ever left for, however old, and plans its readers again under a new key', async () => {
    for (const name of ['untried', 'tried']) await addSignup(store, `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`, '/');
    const { batch } = await writeFirst(2, new Date(Date.now() - PROVIDER_IDEMPOTENCY_WINDOW_MS - 60_000));
    const requests = fake.requests.length;
    const ctx = context();
    expect(await settleOpenBatches(ctx, RECAP.date)).toBeNull();
    expect(fake.requests.length).toBe(requests);
    expect(ctx.tally.unknown).toEqual([]);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'failed', attemptedAt: null, failure: { reason: expect.stringMatching(/^never tried/) } });
    const planned = [];
    for await (const group of candidateGroups(store, RECAP.date, 100)) planned.push(...group.map((s) => s.id));
    expect(planned).toEqual(expect.arrayContaining(batch.subscriberIds));
  });

  it('records a batch’s first attempt before its request leaves, and keeps that first time', async () => {
    for (const name of ['untried', 'tried']) await addSignup(store, `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`, '/');
    const { batch, messages } = await writeFirst(2);
    expect(batch.attemptedAt).toBeNull();
    fake.serverErrors = 100;
    const before = Date.now();
    expect(await sendAndRecord(context(), batch, messages)).toMatch(/kept failing/);
    const first = (await store.findDigestBatch(batch.id))!.attemptedAt!;
    expect(first.getTime()).toBeGreaterThanOrEqual(before - 1000);
    fake.serverErrors = 0;
    expect(await sendAndRecord(context(), batch, messages)).toBeNull();
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'sent', attemptedAt: first });
  });
});

describe('the age check before every attempt', () => {
  // Readers nobody has served yet (the tests above served the first twelve).
  let next = 100;
  beforeEach(async () => {
    for (let i = 0; i < 2; i++) await addSignup(store, `late${next++}@example.com`, '/');
  });

  it('keeps a margin larger than the longest retry budget of the delivery policy with the largest --timeout', () => {
    const budget = longestRetryBudgetMs({ ...DEFAULT_DELIVERY_POLICY, requestTimeoutMs: MAX_REQUEST_TIMEOUT_MS });
    // 15 tries of 600 s, back-off 1 + 2 + 4 + 8 s, ten rate-limit waits of 120 s: 2 h 50 min 15 s.
    expect(budget).toBe(15 * 600_000 + 15_000 + 10 * 120_000);
    expect(longestRetryBudgetMs()).toBe(budget);
    expect(REPEAT_SAFETY_MARGIN_MS).toBeGreaterThan(budget);
    expect(LAST_ATTEMPT_AGE_MS).toBe(PROVIDER_IDEMPOTENCY_WINDOW_MS - REPEAT_SAFETY_MARGIN_MS);
    // An attempt that starts just before the cutoff, with every retry it may make, still ends
    // inside the provider's 24 h.
    expect(LAST_ATTEMPT_AGE_MS + budget).toBeLessThan(PROVIDER_IDEMPOTENCY_WINDOW_MS);
  });

  it('starts no attempt once the batch is (24 h − margin) old: retries that cross the cutoff stop there and the batch becomes unknown', async () => {
    // A clock that moves 20 minutes at every look (one look right before each attempt), a batch
    // 50 minutes short of the cutoff, and a provider that fails every request.
    const start = Date.now();
    const ages: number[] = [];
    const { batch, messages } = await writeFirst(2, new Date(start - LAST_ATTEMPT_AGE_MS + 50 * 60_000));
    const now = () => {
      const at = new Date(start + ages.length * 20 * 60_000);
      ages.push(at.getTime() - batch.createdAt.getTime());
      return at;
    };
    fake.serverErrors = 100;
    const retrying = new ResendMailer({ apiKey: 're_test_unit', baseUrl: fake.url, from: FROM, policy: { maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 2 } });
    const ctx = context({ mailer: retrying, now });
    const before = fake.requests.length;
    expect(await sendAndRecord(ctx, batch, messages)).toBeNull();
    fake.serverErrors = 0;
    const requests = fake.requests.length - before;
    // Looks at cutoff − 50, − 30, − 10 min go ahead; the one at cutoff + 10 min stops the call.
    expect(ages.map((age) => Math.round((age - LAST_ATTEMPT_AGE_MS) / 60_000))).toEqual([-50, -30, -10, 10]);
    expect(requests).toBe(ages.filter((age) => age < LAST_ATTEMPT_AGE_MS).length);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'unknown' });
    expect(ctx.tally.unknown[0]!.reason).toMatch(/could reach the provider after it forgets the idempotency key/);
  });

  it('sends nothing when the batch was settled elsewhere between its writing and the attempt', async () => {
    const { batch, messages } = await writeFirst(2);
    await store.settleDigestBatch(batch.id, { state: 'skipped', at: new Date() });
    const before = fake.requests.length;
    const ctx = context();
    expect(await sendAndRecord(ctx, batch, messages)).toBeNull();
    expect(fake.requests.length).toBe(before);
    expect(ctx.tally.sent).toBe(0);
    expect(await store.findDigestBatch(batch.id)).toMatchObject({ state: 'skipped' });
  });
});

