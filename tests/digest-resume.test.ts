// Issue 21: a Monday that heals itself. Single mode, 150 subscribers, the provider down from the
// scheduled moment: the scheduled run stops, the scheduler tries again by itself, and once the
// provider is back every subscriber has exactly one copy, --history shows the stopped run and its
// resumption, and the operator got one notice of the stop and one of the completion (naming 150
// sent), through the mail outbox. On PGlite and PostgreSQL. The windows are shortened (outage
// 12 s, resume after 3 s doubling to 6 s, the provider policy's retries in milliseconds); the
// defaults' figures (2 minutes down, done within 8 minutes) are computed in resume.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockReading } from './support/clocks.ts';
import { recaps } from '../content/index.ts';
import { startDigestScheduler, type DigestScheduler } from '../jobs/digest/scheduler.ts';
import { createLogger } from '../server/http/logger.ts';
import { createOutboxWorker, type OutboxWorker } from '../server/mail/outbox-worker.ts';
import { ResendMailer } from '../server/mail/resend.ts';
import type { Store } from '../server/store/types.ts';
import { subscriberMail } from '../server/mail/subscriber-mail.ts';
import { addSignup } from './support/store-ops.ts';
import { startFakeResend, type FakeResend } from './support/fake-resend.ts';
import { storeBackends, type OpenedBackend } from './support/store-backends.ts';

const SECRET = 'digest-resume-secret-0123456789abcdef0123456789';
const FROM = 'Launched Weekly <digest@launchedweekly.test>';
const OPERATOR = 'operator@launchedweekly.test';
const READERS = 150;
const OUTAGE_MS = 12_000;
const RECAP = '2025-07-14';
// The scheduler's clock: the Monday of the recap, moving with real time.
const MONDAY = new Date(`${RECAP}T09:00:00Z`).getTime();

/** A node-cron expression (with seconds) that fires once, `ms` from now. */
function onceIn(ms: number): { cron: string; at: number } {
  const at = new Date(Math.ceil((Date.now() + ms) / 1000) * 1000);
  return { cron: `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`, at: at.getTime() };
}

for (const backend of storeBackends.filter((b) => b.name !== 'supabase')) {
  describe.skipIf(!backend.available)(`A stopped Monday resumes by itself on ${backend.name}`, () => {
    let opened: OpenedBackend;
    let store: Store;
    let fake: FakeResend;
    let scheduler: DigestScheduler;
    let worker: OutboxWorker;

    beforeAll(async () => {
      opened = await backend.open();
      store = opened.store;
      for (let i = 0; i < READERS; i++) await addSignup(store, `reader${String(i).padStart(3, '0')}@example.com`, '/');
      fake = await startFakeResend();
    }, 120_000);
    afterAll(async () => {
      await scheduler?.stop();
      await worker?.stop();
      await fake?.close();
      await opened?.cleanup();
    });

    it('sends every subscriber exactly one copy after the provider returns, with no command run, and tells the operator twice', async () => {
      const mailer = new ResendMailer({ apiKey: 're_test_resume', baseUrl: fake.url, from: FROM, policy: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 } });
      // The server's outbox worker, delivering the operator's notices.
      worker = createOutboxWorker({ store, mailer: async () => mailer, compose: subscriberMail({ siteUrl: 'https://lw.test', secret: SECRET }), log: { info: () => {}, warn: () => {} }, pollSeconds: 0.5, retryFirstSeconds: 1, retryMaxSeconds: 2 });
      worker.start();
      const started = Date.now();
      const { cron, at } = onceIn(3_000);
      fake.outage = true;
      scheduler = startDigestScheduler({
        cron,
        timezone: 'UTC',
        freshnessDays: 7,
        store,
        mailer,
        recaps,
        siteUrl: 'https://lw.test',
        unsubscribeSecret: SECRET,
        logger: createLogger({ level: 'silent', pretty: false }),
        clock: clockReading(() => new Date(MONDAY + (Date.now() - started))),
        resume: { firstMs: 3_000, maxMs: 6_000 },
        operatorEmail: OPERATOR,
      });
      // The outage lasts OUTAGE_MS from the scheduled moment.
      await new Promise((resolve) => setTimeout(resolve, at + OUTAGE_MS - Date.now()));
      expect(fake.requests.filter((r) => r.kind === 'outage').length).toBeGreaterThan(0);
      expect(fake.forRecap(RECAP)).toEqual([]);
      const recovered = Date.now();
      fake.outage = false;

      const everyone = Array.from({ length: READERS }, (_, i) => `reader${String(i).padStart(3, '0')}@example.com`);
      const done = () => everyone.every((email) => fake.deliveredTo(email, RECAP).length > 0);
      while (!done() && Date.now() - recovered < 60_000) await new Promise((resolve) => setTimeout(resolve, 250));
      const tookMs = Date.now() - recovered;
      expect(done()).toBe(true);
      expect(tookMs).toBeLessThan(60_000);
      // Wait out one more resume interval: nothing more may arrive.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      expect(everyone.map((email) => fake.deliveredTo(email, RECAP).length)).toEqual(everyone.map(() => 1));
      expect(scheduler.nextResume()).toBeNull();

      const runs = (await store.recentDigestRuns(20)).filter((r) => r.kind === 'scheduled').reverse();
      expect(runs[0]).toMatchObject({ outcome: 'stopped', recapDate: RECAP });
      expect(runs[0]!.message).toMatch(/^Stopped after sending Week of July 14, 2025 to 0 subscribers: the provider kept failing/);
      expect(runs.at(-1)).toMatchObject({ outcome: 'sent', sent: READERS });
      expect(runs.at(-1)!.message).toMatch(/^Resumed \(try \d+\): Sent Week of July 14, 2025 to 150 subscribers\./);
      expect(runs.slice(1).every((r) => /^Resumed \(try \d+\)/.test(r.message ?? ''))).toBe(true);

      const toOperator = () => fake.messages.filter((m) => m.to.includes(OPERATOR));
      while (toOperator().length < 2 && Date.now() - recovered < 90_000) await new Promise((resolve) => setTimeout(resolve, 250));
      // The stop notice waited in the outbox through the same outage, so the two may arrive in either order.
      const notices = [...toOperator()].sort((a, b) => (a.subject.includes('Stopped') ? -1 : b.subject.includes('Stopped') ? 1 : 0));
      expect(notices.map((m) => m.subject)).toEqual([
        expect.stringMatching(/^\[Launched Weekly\] Stopped: the 2025-07-14 recap, retrying at /),
        expect.stringMatching(/^\[Launched Weekly\] Resumed and finished: the 2025-07-14 recap, sent$/),
      ]);
      expect(notices[0]!.text).toContain('Why: Stopped after sending Week of July 14, 2025 to 0 subscribers: the provider kept failing');
      expect(notices[1]!.text).toContain('This run: 150 sent');
      expect(notices[1]!.text).toMatch(/The 2025-07-14 recap so far: 150 sent · \d+ failed · 0 unknown · 0 skipped · bounces 0 \(0\.00 %\) · complaints 0 \(0\.00 %\)/);
      expect(notices[1]!.text).toContain('Next scheduled run:');
      console.info(`[${backend.name}] all ${READERS} served ${(tookMs / 1000).toFixed(1)} s after the provider returned; ${runs.length} scheduled runs; notices: ${notices.length}`);
    }, 240_000);
  });
}
