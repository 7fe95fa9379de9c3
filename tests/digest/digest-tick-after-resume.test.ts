// A tick never waits inside a resume try. A try resuming last week's stopped run is in
// flight (its batch held by the provider) when Monday 09:00 makes the new week public and the
// schedule fires: the tick's run starts once the try ends and chooses the newest public week
// itself, instead of answering with the try's report (which chose its recap before 09:00).
import { afterAll, describe, expect, it } from 'vitest';
import { clockReading } from '../support/clocks.ts';
import { recaps } from '../../content/index.ts';
import { startDigestScheduler, type DigestScheduler } from '../../jobs/digest/scheduler.ts';
import { createLogger } from '../../server/http/logger.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import { useStoreAndProvider } from '../support/store-and-provider.ts';
import { storeBackends } from '../support/store-backends.ts';

const SECRET = 'tick-after-resume-secret-0123456789abcdef012345';
const READERS = ['a@example.com', 'b@example.com', 'c@example.com'];

for (const backend of storeBackends.filter((b) => b.name !== 'supabase')) {
  describe.skipIf(!backend.available)(`A tick during a resume try on ${backend.name}`, () => {
    const rig = useStoreAndProvider(backend, { readers: READERS });
    let scheduler: DigestScheduler | undefined;
    afterAll(async () => {
      await scheduler?.stop();
    });

    it('runs after the try and sends the week that 09:00 made public', async () => {
      const { store, fake } = rig;
      // Sunday: the July 6 week is the newest public one, and its scheduled run was cut short.
      let clock = new Date('2025-07-13T12:00:00Z');
      // Its tick's holder died: the claim's lease has passed.
      const sunday = new Date('2025-07-13T11:00:00Z');
      expect(await store.beginDigestTick({ tick: sunday, holder: 'a dead server', now: sunday, leaseMs: 1_000, late: false })).not.toBeNull();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inFlight!: () => void;
      const tryInFlight = new Promise<void>((resolve) => (inFlight = resolve));
      fake.onBatchAccepted = async (accepted) => {
        if (accepted !== 1) return;
        inFlight();
        await held;
      };
      scheduler = startDigestScheduler({
        resumeInterrupted: true,
        timezone: 'UTC',
        freshnessDays: 30,
        store,
        mailer: new ResendMailer({ apiKey: 're_test_tick', baseUrl: fake.url, from: 'Launched Weekly <digest@launchedweekly.test>' }),
        recaps,
        siteUrl: 'https://lw.test',
        unsubscribeSecret: SECRET,
        logger: createLogger({ level: 'silent', pretty: false }),
        clock: clockReading(() => clock),
        cron: '0 11 * * 0',
        resume: { firstMs: 100, maxMs: 200 },
      });
      await tryInFlight;
      // Monday 09:00: the July 14 week is public; the schedule fires while the try's batch is out.
      clock = new Date('2025-07-14T09:00:00Z');
      const tick = scheduler.runNow();
      release();
      const report = await tick;

      expect(report).toMatchObject({ outcome: 'sent', sent: READERS.length, recap: { date: '2025-07-14' } });
      expect(READERS.map((email) => [fake.deliveredTo(email, '2025-07-06').length, fake.deliveredTo(email, '2025-07-14').length])).toEqual(READERS.map(() => [1, 1]));
      const runs = (await store.recentDigestRuns(10)).filter((r) => r.kind === 'scheduled' && r.outcome !== null).reverse();
      expect(runs.map((r) => [r.recapDate, r.outcome])).toEqual([
        ['2025-07-06', 'sent'],
        ['2025-07-14', 'sent'],
      ]);
      expect(runs[0]!.message).toMatch(/^Resumed \(try 1\): Sent Week of July 6, 2025/);
    }, 120_000);
  });
}
