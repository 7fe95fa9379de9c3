// Which recap a run picks and when the schedule stays quiet; what a run reports when the provider
// refuses an address, stays down or refuses the sender; and the node-cron scheduler around the
// job: it fires, and stop() lets the batch in flight finish and be recorded.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clockReading } from '../support/clocks.ts';
import { recaps } from '../../content/index.ts';
import { startDigestScheduler } from '../../jobs/digest/scheduler.ts';
import { runWeeklyDigest, type DigestOptions } from '../../server/mail/digest/run.ts';
import { createLogger } from '../../server/http/logger.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakeResend, type FakeResend } from '../support/fake-resend.ts';
import { addSignup } from '../support/store-ops.ts';
import { startReplica } from '../support/digest-scheduler-harness.ts';

const SECRET = 'scheduler-test-secret-0123456789abcdef012345';
const FROM = 'Launched Weekly <digest@launchedweekly.test>';
const logger = createLogger({ level: 'silent', pretty: false });

let store: Store;
let outboxDir: string;
beforeAll(async () => {
  store = await openPGliteStore(null);
  for (let i = 0; i < 150; i++) await addSignup(store, `reader${i}@example.com`, '/');
});
afterAll(() => store.close());
beforeEach(async () => {
  outboxDir = await mkdtemp(join(tmpdir(), 'lw-scheduler-outbox-'));
});
afterEach(() => rm(outboxDir, { recursive: true, force: true }));

const files = async () => (await readdir(outboxDir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml'));

function options(overrides: Partial<DigestOptions>): DigestOptions {
  return {
    store,
    mailer: new OutboxMailer({ dir: outboxDir, from: FROM }),
    recaps,
    now: new Date('2025-07-14T09:00:00Z'),
    siteUrl: 'https://launchedweekly.test',
    unsubscribeSecret: SECRET,
    mode: 'scheduled',
    freshnessDays: 7,
    ...overrides,
  };
}

describe('which recap a run sends', () => {
  it('a scheduled run skips a recap whose freshness has passed, says so, and sends nothing', async () => {
    const report = await runWeeklyDigest(options({ now: new Date('2025-07-24T09:00:00Z') }));
    expect(report.outcome).toBe('stale');
    expect(report.recap).toMatchObject({ date: '2025-07-14', ageDays: 10 });
    expect(report.message).toContain('is 10 days old');
    expect(report.message).toContain('DIGEST_FRESHNESS_DAYS');
    expect(report.message).toContain('npm run digest -- --recap 2025-07-14');
    expect(await files()).toHaveLength(0);
  });

  it('a week-old recap is stale on the next Monday: the schedule never sends last week again', async () => {
    const report = await runWeeklyDigest(options({ now: new Date('2025-07-21T09:00:00Z') }));
    expect(report).toMatchObject({ outcome: 'stale', sent: 0 });
  });

  it('decides publication in DIGEST_TZ: 09:30 on Monday in Tokyo is still before 09:00 in UTC', async () => {
    const mondayEarlyUtc = new Date('2025-07-14T00:30:00Z');
    const utc = await runWeeklyDigest(options({ now: mondayEarlyUtc, dryRun: true }));
    expect(utc.recap?.date).toBe('2025-07-06');
    const tokyo = await runWeeklyDigest(options({ now: mondayEarlyUtc, timezone: 'Asia/Tokyo', dryRun: true }));
    expect(tokyo.recap?.date).toBe('2025-07-14');
    expect(tokyo).toMatchObject({ outcome: 'dry-run', sent: 150 });
    expect(await files()).toHaveLength(0);
  });

  it('a manual run sends the newest recap whatever its age, after naming it', async () => {
    const lines: string[] = [];
    const report = await runWeeklyDigest(
      options({ mode: 'manual', now: new Date('2026-03-02T09:00:00Z'), recapWeek: '2025-06-30', log: { info: (l) => lines.push(l), warn: (l) => lines.push(l) } }),
    );
    expect(lines[0]).toMatch(/^Recap: Week of June 30, 2025 — .+ \(\/weekly-recap-june-30, \d+ days old\)$/);
    expect(report).toMatchObject({ outcome: 'sent', sent: 150 });
    expect(await files()).toHaveLength(150);
  });

  it('refuses to send a recap dated in the future, but previews it with --to', async () => {
    const early = new Date('2025-07-10T09:00:00Z');
    const refused = await runWeeklyDigest(options({ mode: 'manual', now: early, recapWeek: '2025-07-14' }));
    expect(refused.outcome).toBe('not-yet');
    expect(refused.message).toContain('is not public until Mon 14 Jul 2025 09:00 UTC');
    const preview = await runWeeklyDigest(options({ mode: 'manual', now: early, recapWeek: '2025-07-14', testRecipient: 'operator@example.com' }));
    expect(preview).toMatchObject({ outcome: 'test-sent', sent: 1 });
    expect(await files()).toEqual([expect.stringMatching(/^test-/)]);
    expect(await store.countDeliveries('2025-07-14')).toBe(0);
    const dryTest = await runWeeklyDigest(options({ mode: 'manual', now: early, recapWeek: '2025-07-14', testRecipient: 'operator@example.com', dryRun: true }));
    expect(dryTest).toMatchObject({ outcome: 'dry-run', sent: 1 });
    expect(await files()).toHaveLength(1);
  });
});

describe('when the provider says no', () => {
  let fake: FakeResend;
  beforeEach(async () => {
    fake = await startFakeResend();
  });
  afterEach(() => fake.close());
  const resend = (apiKey = 're_test_failures') => new ResendMailer({ apiKey, baseUrl: fake.url, from: FROM, policy: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 } });

  it('records a refused address as failed, never as sent, and sends everyone else', async () => {
    const recap = '2025-06-16';
    fake.refusedAddresses.add('reader7@example.com');
    const active = (await store.countSubscribers()).active;
    const report = await runWeeklyDigest(options({ mode: 'manual', recapWeek: recap, mailer: resend(), now: new Date('2025-06-16T09:00:00Z') }));
    expect(report).toMatchObject({ outcome: 'sent', sent: active - 1 });
    expect(report.failed).toEqual([{ reason: expect.stringMatching(/^validation_error: Invalid `to` field/), count: 1 }]);
    expect(await store.countDeliveries(recap)).toBe(active - 1);
    expect(fake.deliveredTo('reader7@example.com', recap)).toHaveLength(0);
    expect(fake.forRecap(recap)).toHaveLength(report.sent);
  });

  it('stops when the provider stays down, records nothing it did not take, and a later run resumes', async () => {
    const recap = '2025-06-09';
    fake.serverErrors = 1_000;
    const down = await runWeeklyDigest(options({ mode: 'manual', recapWeek: recap, mailer: resend() }));
    expect(down).toMatchObject({ outcome: 'stopped', sent: 0 });
    expect(down.failed).toEqual([{ reason: expect.stringMatching(/internal_server_error \(HTTP 500\).*gave up after 3 tries/), count: 100 }]);
    expect(down.message).toContain('the provider kept failing');
    expect(await store.countDeliveries(recap)).toBe(0);

    fake.serverErrors = 0;
    const active = (await store.countSubscribers()).active;
    const resumed = await runWeeklyDigest(options({ mode: 'manual', recapWeek: recap, mailer: resend() }));
    expect(resumed).toMatchObject({ outcome: 'sent', sent: active, failed: [] });
    expect(fake.forRecap(recap)).toHaveLength(active);
  });

  it('stops at the first batch when the provider refuses the sender (bad API key)', async () => {
    const report = await runWeeklyDigest(options({ mode: 'manual', recapWeek: '2025-06-01', mailer: resend('not-a-key') }));
    expect(report.outcome).toBe('stopped');
    expect(report.message).toContain('the provider refused the sender: invalid_api_key (HTTP 403)');
    expect(fake.requests).toHaveLength(1);
    expect(await store.countDeliveries('2025-06-01')).toBe(0);
  });
});

describe('the scheduler', () => {
  it('fires on its cron expression in its time zone and sends the week’s recap', async () => {
    const scheduler = startDigestScheduler({
      cron: '* * * * * *',
      timezone: 'Europe/Lisbon',
      freshnessDays: 7,
      store,
      mailer: new OutboxMailer({ dir: outboxDir, from: FROM }),
      recaps,
      siteUrl: 'https://launchedweekly.test',
      unsubscribeSecret: SECRET,
      logger,
      clock: clockReading(() => new Date('2025-07-07T09:00:00Z')),
    });
    try {
      expect(scheduler.nextRun()).toBeInstanceOf(Date);
      const deadline = Date.now() + 10_000;
      while ((await store.countDeliveries('2025-07-06')) < 150 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await store.countDeliveries('2025-07-06')).toBe(150);
      expect(await files()).toHaveLength(150);
    } finally {
      await scheduler.stop();
    }
    // Stopped means stopped: a new subscriber stays unsent however long we wait.
    await addSignup(store, 'after.stop@example.com', '/');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await store.countDeliveries('2025-07-06')).toBe(150);
  }, 20_000);

  describe('stop()', () => {
    let fake: FakeResend;
    beforeEach(async () => {
      fake = await startFakeResend();
    });
    afterEach(() => fake.close());

    it('waits for the batch in flight to be accepted and recorded, then sends no more', async () => {
      const recap = '2025-06-23';
      const active = (await store.countSubscribers()).active;
      expect(active).toBeGreaterThan(100);
      const scheduler = startDigestScheduler({
        cron: '0 9 * * 1',
        timezone: 'UTC',
        freshnessDays: 7,
        store,
        mailer: new ResendMailer({ apiKey: 're_test_scheduler', baseUrl: fake.url, from: FROM }),
        recaps,
        siteUrl: 'https://launchedweekly.test',
        unsubscribeSecret: SECRET,
        logger,
        clock: clockReading(() => new Date('2025-06-23T09:00:00Z')),
      });
      let stopped: Promise<void> | null = null;
      let stopResolved = false;
      let resolvedWhileBatchHeld: boolean | null = null;
      fake.onBatchAccepted = async () => {
        if (stopped) return;
        // Shutdown arrives while the provider holds the first batch.
        stopped = scheduler.stop().then(() => {
          stopResolved = true;
        });
        await new Promise((r) => setTimeout(r, 300));
        resolvedWhileBatchHeld = stopResolved;
      };
      const report = await scheduler.runNow();
      await stopped;
      expect(resolvedWhileBatchHeld).toBe(false);
      expect(stopResolved).toBe(true);
      expect(report).toMatchObject({ outcome: 'stopped', sent: 100 });
      expect(report?.message).toContain('stopped on request');
      expect(fake.forRecap(recap)).toHaveLength(100);
      expect(await store.countDeliveries(recap)).toBe(100);
      // The lease was given back: another holder can take it at once.
      expect(await store.acquireDigestLock(recap, 'someone-else', 1_000)).toBe(true);
      expect(await scheduler.runNow()).toBeNull();
    });
  });
});

describe('the scheduler on a manual clock', () => {
  it('runs a week of daily ticks and daily housekeeping as the clock moves, one run per tick, none twice', async () => {
    const fake = await startFakeResend();
    const own = await openPGliteStore(null);
    try {
      for (let i = 0; i < 3; i++) await addSignup(own, `week${i}@example.com`, '/');
      const replica = startReplica(own, fake, new Date('2025-07-06T12:00:00Z'), { cron: '0 9 * * *' });
      await replica.scheduler.idle();
      expect(replica.scheduler.nextRun()).toEqual(new Date('2025-07-07T09:00:00Z'));
      expect(replica.scheduler.nextHousekeeping()).toEqual(new Date('2025-07-07T03:30:00Z'));
      await replica.clock.advance(7 * 24 * 3_600_000);
      await replica.scheduler.idle();
      await replica.scheduler.stop();

      const ticks = await own.digestTicksSince(new Date('2025-07-01T00:00:00Z'));
      expect(ticks.map((t) => [t.tick.toISOString().slice(0, 13), t.state])).toEqual(
        ['13', '12', '11', '10', '09', '08', '07', '06'].map((day) => [`2025-07-${day}T09`, 'done']),
      );
      // The start, 3 h after the July 6 tick, caught that one up late; every later day found the week sent.
      expect(fake.forRecap('2025-07-06')).toHaveLength(3);
      expect(replica.lines.filter((line) => line.startsWith('Weekly digest: Nothing to send: Week of July 6, 2025 already went'))).toHaveLength(7);
      expect(replica.lines.filter((line) => line.startsWith('Removed') && line.includes('unconfirmed signups'))).toHaveLength(7);
    } finally {
      await fake.close();
      await own.close();
    }
  }, 120_000);
});
