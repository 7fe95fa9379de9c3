// The durable outbox on every store backend (PGlite, PostgreSQL, Supabase over REST): rows are
// written with the change that promises them, claims never overlap, a killed worker's claim comes
// back after its lease, the provider's outage means retries with back-off and exactly one copy, a
// message refused outright keeps waiting past the provider's 24-hour key life on a fresh key, one
// whose try had no answer becomes unknown then instead of risking a copy, a refused message fails
// and gives its confirmation throttle back, and the summary the report and --history show counts it all.
import { describe, expect, it } from 'vitest';
import { createOutboxWorker, OUTBOX_DEFAULTS, OUTBOX_DELIVERY_POLICY, retryDelaySeconds, type OutboxWorker } from '../../server/mail/outbox-worker.ts';
import type { ClaimOptions, ClaimedRef, OutboxSettlement } from '../../server/store/mail-outbox.ts';
import { StoreUnavailableError, type SignupRequest } from '../../server/store/types.ts';
import { subscriberMail } from '../../server/mail/subscriber-mail.ts';
import { createManualClock } from '../../server/clock.ts';
import { recaps } from '../../content/index.ts';
import { gatherReport } from '../../jobs/report/gather.ts';
import { headlineFigures, renderReportHtml } from '../../jobs/report/render.tsx';
import { storeBackends } from '../support/store-backends.ts';
import type { FakeResend } from '../support/fake-resend.ts';
import { useStoreAndProvider, type StoreAndProvider } from '../support/store-and-provider.ts';

const SECRET = 'outbox-worker-secret-0123456789abcdef0123456789';
const compose = subscriberMail({ siteUrl: 'https://launched.test', secret: SECRET });
const quiet = { info: () => {}, warn: () => {} };
const KEY = /^outbox\/[0-9a-f-]{36}\/1$/;
const double = (email: string): SignupRequest => ({ email, source: '/', mode: 'double', networkHash: null, addressHashes: [] });

describe('the outbox back-off', () => {
  it('waits 5 s, then doubles, never longer than OUTBOX_RETRY_MAX_SECONDS: with the defaults a message goes out within 3 minutes of the provider coming back', () => {
    const waits = Array.from({ length: 12 }, (_, i) => retryDelaySeconds(i + 1, OUTBOX_DEFAULTS.retryFirstSeconds, OUTBOX_DEFAULTS.retryMaxSeconds));
    expect(waits.slice(0, 6)).toEqual([5, 10, 20, 40, 80, 120]);
    expect(Math.max(...waits)).toBe(120);
    // The longest wait after a failed try, plus one poll, plus one try with the outbox's policy
    // (two requests of at most 15 s each and a short back-off): under three minutes.
    const tryMs = (OUTBOX_DELIVERY_POLICY.maxAttempts ?? 0) * (OUTBOX_DELIVERY_POLICY.requestTimeoutMs ?? 0) + 2_000;
    expect(OUTBOX_DEFAULTS.retryMaxSeconds * 1000 + OUTBOX_DEFAULTS.pollSeconds * 1000 + tryMs).toBeLessThan(3 * 60_000);
    expect(OUTBOX_DEFAULTS.leaseSeconds * 1000).toBeGreaterThan(tryMs);
  });
});

/** What every group of outbox tests uses: the store and provider, a worker with one-second back-off, and what one address got. */
interface OutboxRig {
  rig: StoreAndProvider;
  worker(): OutboxWorker;
  /** The messages of one kind the provider took for one address. */
  to(email: string, kind: string): FakeResend['messages'];
}

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`The mail outbox on ${backend.name}`, () => {
    const rig = useStoreAndProvider(backend);

    const worker = () => createOutboxWorker({ store: rig.store, mailer: async () => rig.mailer, compose, log: quiet, retryFirstSeconds: 1, retryMaxSeconds: 1, leaseSeconds: 30 });
    const to = (email: string, kind: string) => rig.fake.messages.filter((m) => m.to.includes(email) && m.tags.some((t) => t.name === 'kind' && t.value === kind));

    const outbox: OutboxRig = { rig, worker, to };
    claims(outbox);
    providerOutage(outbox);
    workerClock(outbox);
    refusalsWelcomesAndReport(outbox);
    databaseOutageAndStaleClaims(outbox);
  });
}

/** Rows written with the signup that promises them, and claims that never overlap. */
function claims({ rig }: OutboxRig) {
  it('queues a confirmation with the signup that claims its throttle, and nothing for a throttled repeat', async () => {
    const first = await rig.store.signUp(double('queued@example.com'));
    expect(first.outcome).toBe('send_confirmation');
    expect((await rig.store.signUp(double('queued@example.com'))).outcome).toBe('nothing_to_send');
    const claimed = await rig.store.claimMail(10, 30);
    expect(claimed).toEqual([expect.objectContaining({ kind: 'confirm', subscriberId: first.subscriberId, email: 'queued@example.com', status: 'pending', attempts: 1 })]);
    // Leased: a second worker finds nothing until the lease ends or the message is settled.
    expect(await rig.store.claimMail(10, 30)).toEqual([]);
    expect(await rig.store.settleMail(claimed[0]!, { state: 'retrying', error: 'test', retrySeconds: 0 })).toBe(true);
    const again = await rig.store.claimMail(10, 30);
    expect(again.map((m) => [m.id, m.attempts])).toEqual([[claimed[0]!.id, 2]]);
    expect(await rig.store.settleMail(again[0]!, { state: 'sent', providerId: 'p-1' })).toBe(true);
    expect(await rig.store.settleMail(again[0]!, { state: 'sent', providerId: 'p-1' })).toBe(false);
  });

  it('never gives one message to two workers claiming at once, and gives a killed worker’s claim back after its lease', async () => {
    for (let i = 0; i < 6; i++) await rig.store.enqueueMail('operator', null, { to: `op${i}@example.com`, subject: '[Launched Weekly] test', text: 'hello' });
    const [a, b] = await Promise.all([rig.store.claimMail(4, 1), rig.store.claimMail(4, 1)]);
    const ids = [...a!, ...b!].map((m) => m.id);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    // Nobody settles them (the worker was killed): after the 1 s lease they are due again.
    expect(await rig.store.claimMail(10, 1)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const reclaimed = await rig.store.claimMail(10, 30);
    expect(reclaimed.map((m) => m.id).sort()).toEqual([...ids].sort());
    for (const m of reclaimed) await rig.store.settleMail(m, { state: 'cancelled', error: 'test clean-up' });
  });
}

/** A provider that is down for a while, or for longer than its keys live. */
function providerOutage({ rig, worker, to }: OutboxRig) {
  it('retries through a provider outage and sends exactly one copy under the message’s own key when it is back', async () => {
    const { subscriberId } = await rig.store.signUp(double('outage@example.com'));
    rig.fake.outage = true;
    const delivering = worker();
    await delivering.deliverDue();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await delivering.deliverDue();
    expect(rig.fake.requests.filter((r) => r.kind === 'outage').length).toBeGreaterThanOrEqual(2);
    expect(to('outage@example.com', 'confirmation')).toEqual([]);
    const waiting = await rig.store.outboxSummary(7);
    expect(waiting.retrying).toBeGreaterThanOrEqual(1);
    expect(waiting.failures[0]).toMatchObject({ kind: 'confirm', lastError: expect.stringContaining('503') });

    rig.fake.outage = false;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await delivering.deliverDue()).toBe(1);
    const sent = to('outage@example.com', 'confirmation');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.idempotencyKey).toMatch(KEY);
    expect(sent[0]!.text).toContain('https://launched.test/confirm?token=');
    expect(await delivering.deliverDue()).toBe(0);
    await delivering.stop();
    expect((await rig.store.findSubscriber(subscriberId))?.status).toBe('pending');
  });

  it('keeps a message whose tries were all refused outright past 24 hours, on a fresh key, and sends it once', async () => {
    const clock = createManualClock(new Date());
    rig.fake.clock = () => clock.now().getTime();
    const later = createOutboxWorker({ store: rig.store, mailer: async () => rig.mailer, compose, log: quiet, retryFirstSeconds: 60, retryMaxSeconds: 3600, leaseSeconds: 30, clock });
    try {
      await rig.store.signUp(double('late@example.com'));
      rig.fake.outage = true;
      for (let hour = 0; hour < 30; hour += 1) {
        await later.deliverDue();
        await clock.advance(60 * 60_000);
      }
      rig.fake.outage = false;
      await later.deliverDue();
      const sent = to('late@example.com', 'confirmation');
      expect(sent).toHaveLength(1);
      // A second generation of the key: the first one's day was over.
      expect(sent[0]!.idempotencyKey).toMatch(/^outbox\/[0-9a-f-]{36}\/2$/);
      const summary = await rig.store.outboxSummary(7);
      expect(summary.failures.filter((f) => f.state === 'failed' && f.kind === 'confirm')).toEqual([]);
    } finally {
      rig.fake.outage = false;
      rig.fake.clock = Date.now;
      await later.stop();
    }
  });
}

/** Tries with no answer, and a worker whose clock is not the database's. */
function workerClock({ rig, to }: OutboxRig) {
  it('tries a message whose try had no answer again under a fresh key once the provider has forgotten the old one, and says a copy is possible', async () => {
    const clock = createManualClock(new Date());
    rig.fake.clock = () => clock.now().getTime();
    const warnings: string[] = [];
    const later = createOutboxWorker({ store: rig.store, mailer: async () => rig.mailer, compose, log: { info: () => {}, warn: (line) => warnings.push(line) }, retryFirstSeconds: 23 * 3600, retryMaxSeconds: 23 * 3600, leaseSeconds: 2, clock });
    try {
      await rig.store.signUp(double('lost.answer@example.com'));
      // The provider takes the request and the answer never comes: the try may have gone out.
      rig.fake.hang = 1;
      await later.deliverDue();
      expect(to('lost.answer@example.com', 'confirmation')).toHaveLength(1);
      await clock.advance(24 * 60 * 60_000);
      await later.deliverDue();
      // Two copies rather than a confirmation that may never have arrived: the second under the key's next generation.
      const sent = to('lost.answer@example.com', 'confirmation');
      expect(sent).toHaveLength(2);
      expect(sent[1]!.idempotencyKey).toMatch(/^outbox\/[0-9a-f-]{36}\/2$/);
      expect(sent[1]!.idempotencyKey).not.toBe(sent[0]!.idempotencyKey);
      expect(warnings.some((line) => /confirm #\d+ is tried under a fresh key: an earlier try had no answer/.test(line))).toBe(true);
      const summary = await rig.store.outboxSummary(7);
      expect(summary.failures.filter((f) => f.kind === 'confirm')).toEqual([]);
    } finally {
      rig.fake.clock = Date.now;
      await later.stop();
    }
  });

  it('tries a new message at once whatever the worker’s clock says, and waits its retries out on that clock', async () => {
    // A clock a year behind the database's, as a simulation starting on a past Monday has.
    const clock = createManualClock(new Date(Date.now() - 365 * 24 * 60 * 60_000));
    const behind = createOutboxWorker({ store: rig.store, mailer: async () => rig.mailer, compose, log: quiet, retryFirstSeconds: 60, retryMaxSeconds: 60, leaseSeconds: 30, clock });
    try {
      await rig.store.signUp(double('past.clock@example.com'));
      rig.fake.outage = true;
      const outages = () => rig.fake.requests.filter((r) => r.kind === 'outage').length;
      await behind.deliverDue();
      const tried = outages();
      expect(tried).toBeGreaterThan(0);
      rig.fake.outage = false;
      await behind.deliverDue();
      expect(to('past.clock@example.com', 'confirmation')).toEqual([]);
      await clock.advance(61_000);
      await behind.deliverDue();
      expect(to('past.clock@example.com', 'confirmation')).toHaveLength(1);
    } finally {
      rig.fake.outage = false;
      await behind.stop();
    }
  });
}

/** A refused message, the welcome, and the operator's report of it all. */
function refusalsWelcomesAndReport({ rig, worker, to }: OutboxRig) {
  it('fails a message the provider refuses and gives the mailbox’s throttle back, so another spelling of the same mailbox can be confirmed', async () => {
    const mailbox = ['mailbox-hash-of-late-two'];
    const first = await rig.store.signUp({ ...double('late.two@example.com'), addressHashes: mailbox });
    expect(first.outcome).toBe('send_confirmation');
    // Another spelling of the same mailbox is throttled while the first one's confirmation is owed.
    expect((await rig.store.signUp({ ...double('late.two+news@example.com'), addressHashes: mailbox })).outcome).toBe('nothing_to_send');
    rig.fake.refusedAddresses.add('late.two@example.com');
    await worker().deliverDue();
    rig.fake.refusedAddresses.delete('late.two@example.com');
    expect(to('late.two@example.com', 'confirmation')).toEqual([]);
    const again = await rig.store.signUp({ ...double('late.two@example.com'), addressHashes: mailbox });
    expect(again).toEqual({ subscriberId: first.subscriberId, outcome: 'send_confirmation' });
  });

  it('queues a welcome with the activation that makes it due, once ever, and never for a subscriber deleted since', async () => {
    const { subscriberId } = await rig.store.signUp(double('welcome@example.com'));
    await worker().deliverDue();
    const activated = await rig.store.activateSubscriber(subscriberId, 'confirmation', null, true);
    expect(activated).toMatchObject({ activated: true, status: 'active' });
    expect(await rig.store.activateSubscriber(subscriberId, 'confirmation', null, true)).toMatchObject({ activated: false });
    await worker().deliverDue();
    expect(to('welcome@example.com', 'welcome')).toHaveLength(1);

    const gone = await rig.store.signUp({ ...double('gone@example.com'), mode: 'single', welcome: true });
    expect(gone.outcome).toBe('subscribed');
    await rig.store.deleteSubscriber(gone.subscriberId, 'hash-of-gone');
    await worker().deliverDue();
    expect(to('gone@example.com', 'welcome')).toEqual([]);
    expect((await rig.store.outboxSummary(7)).queued).toBe(0);
  });

  it('shows in the operator’s report what is queued, retrying and failed this week, with the reasons', async () => {
    const summary = await rig.store.outboxSummary(7);
    const data = await gatherReport({ store: rig.store, recaps, now: new Date(), siteUrl: 'https://launched.test', production: false, digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 } });
    expect(data.outbox).toEqual(summary);
    expect(summary.failed).toBeGreaterThanOrEqual(1);
    expect(headlineFigures(data)).toContainEqual(expect.stringMatching(`^Mail outbox, last 7 days: ${summary.queued} queued · ${summary.retrying} retrying · ${summary.failed} failed · ${summary.sent} sent`));
    const html = await renderReportHtml(data);
    expect(html).toContain('id="mail-outbox"');
    expect(html).toContain('validation_error');
  });
}

/** The database going away mid-delivery, and a worker settling under a claim it no longer holds. */
function databaseOutageAndStaleClaims({ rig, to }: OutboxRig) {
  it('survives a database outage, also between the provider’s acceptance and the settlement: one copy in the end', async () => {
    await rig.store.signUp(double('dbdown@example.com'));
    let down = true;
    let settleDown = false;
    const flaky: typeof rig.store = Object.create(rig.store, {
      claimMail: { value: (limit: number, lease: number, options?: ClaimOptions) => (down ? Promise.reject(new StoreUnavailableError('The database is unavailable')) : rig.store.claimMail(limit, lease, options)) },
      settleMail: { value: (claimed: ClaimedRef, settlement: OutboxSettlement, now?: Date) => (settleDown ? Promise.reject(new StoreUnavailableError('The database is unavailable')) : rig.store.settleMail(claimed, settlement, now)) },
    }) as typeof rig.store;
    const shaky = createOutboxWorker({ store: flaky, mailer: async () => rig.mailer, compose, log: quiet, leaseSeconds: 1, retryFirstSeconds: 1, retryMaxSeconds: 1 });
    expect(await shaky.deliverDue()).toBe(0);
    expect(to('dbdown@example.com', 'confirmation')).toEqual([]);
    // Back, but gone again right after the provider took the message: it stays claimed.
    down = false;
    settleDown = true;
    await shaky.deliverDue();
    expect(to('dbdown@example.com', 'confirmation')).toHaveLength(1);
    settleDown = false;
    // The lease runs out; the next try repeats it under the same key, which the provider answers from its cache.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await shaky.deliverDue()).toBe(1);
    expect(to('dbdown@example.com', 'confirmation')).toHaveLength(1);
    expect(rig.fake.requests.at(-1)).toMatchObject({ kind: 'replayed', idempotencyKey: expect.stringMatching(KEY) });
    await shaky.stop();
  });

  it('changes nothing when a worker settles under a claim that ran out and another worker holds now', async () => {
    const id = await rig.store.enqueueMail('operator', null, { to: 'op.stale@example.com', subject: '[Launched Weekly] test', text: 'hello' });
    const claimOnly = async (lease: number, now?: Date) => {
      const claimed = await rig.store.claimMail(100, lease, { now });
      // Anything else due goes back as it was.
      for (const other of claimed.filter((m) => m.id !== id)) await rig.store.settleMail(other, { state: 'retrying', error: 'not this test’s', retrySeconds: 0 });
      return claimed.find((m) => m.id === id);
    };
    const stale = await claimOnly(1);
    // Its 1 s lease is over: another worker claims the message.
    const live = await claimOnly(30, new Date(Date.now() + 2_000));
    expect(live).toBeDefined();
    expect(live!.claim).not.toBe(stale!.claim);
    expect(await rig.store.settleMail(stale!, { state: 'retrying', error: 'stale worker', retrySeconds: 0 })).toBe(false);
    // The live claim still keeps every other worker off it.
    expect(await claimOnly(30, new Date(Date.now() + 3_000))).toBeUndefined();
    expect(await rig.store.settleMail(live!, { state: 'sent', providerId: 'p-live' })).toBe(true);
  });
}
