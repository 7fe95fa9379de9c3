// Mail waits for its sender. The provider refuses the sender itself (a used-up quota, a refused
// key) for 30 hours while confirmations are being promised, with two workers running (two
// replicas): every message is held, none failed, past the provider's 24-hour key life (a fresh key
// generation then), the operator is told once, in the log at warn level, in the report and by
// e-mail, with the cause in words; once the provider takes mail again, each confirmation arrives
// exactly once. And a send never outlives its claim. On every store backend, on a manual clock.
import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { gatherReport } from '../../jobs/report/gather.ts';
import { headlineFigures, renderReportHtml } from '../../jobs/report/render.tsx';
import { createManualClock, type ManualClock } from '../../server/clock.ts';
import { createOutboxWorker, type OutboxWorker } from '../../server/mail/outbox-worker.ts';
import type { SignupRequest } from '../../server/store/types.ts';
import { subscriberMail } from '../../server/mail/subscriber-mail.ts';
import { storeBackends } from '../support/store-backends.ts';
import { useStoreAndProvider, type StoreAndProvider } from '../support/store-and-provider.ts';
import { htmlErrors, htmlValidatorAvailable } from '../support/validate-html.ts';

const SECRET = 'outbox-refused-secret-0123456789abcdef0123456789';
const OPERATOR = 'operator@launched.test';
const HOUR = 60 * 60_000;
const compose = subscriberMail({ siteUrl: 'https://launched.test', secret: SECRET });
const double = (email: string): SignupRequest => ({ email, source: '/', mode: 'double', networkHash: null, addressHashes: [] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two replicas' workers on one store, polling on the test's clock. */
function replicas(rig: StoreAndProvider, clock: ManualClock, warnings: string[]): OutboxWorker[] {
  return [1, 2].map(() =>
    createOutboxWorker({
      store: rig.store,
      mailer: async () => rig.mailer,
      compose,
      log: { info: () => {}, warn: (line) => warnings.push(line) },
      pollSeconds: 1800,
      retryFirstSeconds: 600,
      retryMaxSeconds: 21_600,
      operatorEmail: OPERATOR,
      clock,
    }),
  );
}

const report = async (rig: StoreAndProvider, now: Date) =>
  gatherReport({ store: rig.store, recaps, now, siteUrl: 'https://launched.test', production: false, digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 } });

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`Mail that waits for its sender on ${backend.name}`, () => {
    const rig = useStoreAndProvider(backend);

    const confirmations = (email: string) => rig.fake.messages.filter((m) => m.to.includes(email) && m.tags.some((t) => t.name === 'kind' && t.value === 'confirmation'));
    const toOperator = () => rig.fake.messages.filter((m) => m.to.includes(OPERATOR));

    it('holds every message through 30 hours of a used-up quota, tells the operator once, and sends each exactly once after', async () => {
      const clock = createManualClock(new Date());
      rig.fake.clock = () => clock.now().getTime();
      const warnings: string[] = [];
      const workers = replicas(rig, clock, warnings);
      const readers = Array.from({ length: 10 }, (_, i) => `held${i}@example.com`);
      rig.fake.senderRefusal = 'monthly_quota_exceeded';
      for (const worker of workers) worker.start();
      try {
        // A confirmation promised every three hours all through the refusal.
        for (const email of readers) {
          await rig.store.signUp(double(email));
          await workers[0]!.deliverDue();
          await clock.advance(3 * HOUR);
        }
        expect(rig.fake.requests.filter((r) => r.kind === 'sender-refused').length).toBeGreaterThanOrEqual(20);
        expect(rig.fake.messages).toEqual([]);
        const during = await rig.store.outboxSummary(7);
        expect(during).toMatchObject({ failed: 0, sent: 0, unknown: 0, hold: { cause: 'quota', reason: expect.stringMatching(/^monthly_quota_exceeded \(HTTP 429\)/) } });
        const data = await report(rig, clock.now());
        expect(headlineFigures(data)).toContainEqual(expect.stringMatching(/^Mail held since .* UTC: the plan's daily or monthly sending quota is used up \(monthly_quota_exceeded/));
        const html = await renderReportHtml(data);
        expect(html).toMatch(/<p id="mail-held" class="over"><b>Held:<\/b> every e-mail waits, none is failed, since .* because the plan&#x27;s daily or monthly sending quota is used up/);
        if (htmlValidatorAvailable && backend.name === 'pglite') expect(await htmlErrors(html)).toEqual([]);

        rig.fake.senderRefusal = null;
        // The longest pause (six hours) and a poll.
        await clock.advance(7 * HOUR);
        expect(readers.map((email) => confirmations(email).length)).toEqual(readers.map(() => 1));
        // The first ones waited past the provider's 24 hours: they went out under a fresh key.
        expect(confirmations(readers[0]!)[0]!.idempotencyKey).toMatch(/^outbox\/[0-9a-f-]{36}\/2$/);
        expect(confirmations(readers.at(-1)!)[0]!.idempotencyKey).toMatch(/^outbox\/[0-9a-f-]{36}\/1$/);
        const told = toOperator();
        expect(told).toHaveLength(1);
        expect(told[0]!.subject).toBe('[Launched Weekly] E-mail held: the sending quota is used up');
        expect(told[0]!.text).toMatch(/refused the sender: the plan's daily or monthly sending quota is used up \(monthly_quota_exceeded \(HTTP 429\)/);
        expect(warnings.filter((line) => line.startsWith('outbox: The mail provider refused the sender'))).toHaveLength(1);
        const after = await rig.store.outboxSummary(7);
        expect(after).toMatchObject({ failed: 0, queued: 0, retrying: 0, unknown: 0, hold: null });
        expect(after.sent).toBe(readers.length + 1);
        // Nothing more goes out later.
        await clock.advance(26 * HOUR);
        expect(rig.fake.messages).toHaveLength(readers.length + 1);
      } finally {
        rig.fake.senderRefusal = null;
        rig.fake.clock = Date.now;
        for (const worker of workers) await worker.stop();
      }
    }, 60_000);

    it('tells a refused key apart from a quota: its own words in the log and the report, and its own notice', async () => {
      const clock = createManualClock(new Date());
      const warnings: string[] = [];
      const [worker] = replicas(rig, clock, warnings);
      rig.fake.senderRefusal = 'invalid_api_key';
      try {
        await rig.store.signUp(double('key.refused@example.com'));
        await worker!.deliverDue();
        await clock.advance(HOUR);
        await worker!.deliverDue();
        const notice = warnings.filter((line) => line.startsWith('outbox: The mail provider refused the sender'));
        expect(notice).toEqual([expect.stringMatching(/the API key was refused \(missing, invalid, revoked, or not allowed to send\) \(invalid_api_key \(HTTP 403\).* set a valid RESEND_API_KEY/)]);
        expect((await rig.store.outboxSummary(7)).hold).toMatchObject({ cause: 'key' });
        expect(await renderReportHtml(await report(rig, clock.now()))).toContain('because the API key was refused');

        rig.fake.senderRefusal = null;
        await clock.advance(HOUR);
        await worker!.deliverDue();
        expect(confirmations('key.refused@example.com')).toHaveLength(1);
        expect(toOperator().filter((m) => m.subject === '[Launched Weekly] E-mail held: the provider refused the API key')).toHaveLength(1);
        expect((await rig.store.outboxSummary(7)).hold).toBeNull();
      } finally {
        rig.fake.senderRefusal = null;
        await worker!.stop();
      }
    }, 30_000);

    it('abandons a send that has no answer before its claim runs out, and the message goes out once on a later try', async () => {
      await rig.store.signUp(double('slow@example.com'));
      rig.fake.hang = 1;
      const worker = createOutboxWorker({ store: rig.store, mailer: async () => rig.mailer, compose, log: { info: () => {}, warn: () => {} }, leaseSeconds: 2, retryFirstSeconds: 0.5, retryMaxSeconds: 0.5 });
      try {
        const started = Date.now();
        await worker.deliverDue();
        // Settled (retrying) within the 2 s claim, not after the 15 s request timeout.
        expect(Date.now() - started).toBeLessThan(2_000);
        expect((await rig.store.outboxSummary(7)).failures[0]).toMatchObject({ lastError: expect.stringMatching(/stopped|abort|time/i) });
        await sleep(600);
        await worker.deliverDue();
        expect(confirmations('slow@example.com')).toHaveLength(1);
      } finally {
        await worker.stop();
      }
    }, 60_000);
  });
}
