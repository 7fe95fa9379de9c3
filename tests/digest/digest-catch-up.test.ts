// Missed Mondays and the record of ticks, in-process on a manual clock (a week in a second), on
// PGlite and PostgreSQL: a claimed tick whose process died is taken over and sent late, once, with
// one notice; the start-up resume never sends a newer week past its deadline; a replica starting
// late does not run a tick another replica is running; two servers started together run a missed
// tick once; moving DIGEST_CRON later raises no false "Missed", and moving it while down over the
// old tick tells that tick missed; more than a week down tells both weeks in one notice. Then once with real server processes (dist/bin/server.js, as npm start runs
// it): a server SIGKILLed right after it claimed a missed tick, started again: the week is sent
// within the deadline, marked late, with one notice.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DigestRun, Store } from '../../server/store/types.ts';
import { freePort } from '../../scripts/free-port.ts';
import { serverDataKinds, startServerProcess, useReadersDataAndProvider, type ServerProcess } from '../support/server-process.ts';
import { noticesIn, startReplica, type Replica } from '../support/digest-scheduler-harness.ts';
import { startFakeResend, type FakeResend } from '../support/fake-resend.ts';
import { storeBackends, type OpenedBackend } from '../support/store-backends.ts';
import { addSignup } from '../support/store-ops.ts';

const READERS = Array.from({ length: 30 }, (_, i) => `monday${String(i).padStart(2, '0')}@example.com`);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const THIS_WEEK = '2025-07-14';
const LAST_WEEK = '2025-07-06';
const TICK = new Date(`${THIS_WEEK}T09:00:00Z`);
const LAST_TICK = new Date('2025-07-07T09:00:00Z');
const later = (at: Date, ms: number) => new Date(at.getTime() + ms);


type ReplicaOptions = Parameters<typeof startReplica> extends [unknown, unknown, ...infer Rest] ? Rest : never;

/** What the tests of one backend share: its set-up fills it afresh before each test. */
interface TickContext {
  store: Store;
  fake: FakeResend;
  /** A replica on this test's store and provider, stopped when the test ends. */
  start: (...args: ReplicaOptions) => Replica;
  /** How many copies of the week each reader holds, in READERS' order. */
  copies: (week: string) => number[];
  scheduledRuns: () => Promise<DigestRun[]>;
}

/** A tick left unfinished or missed is run late, once, and never past its deadline. */
function unfinishedAndMissedTicks(ctx: TickContext) {
  it('a missed tick claimed by a process that died before sending is taken over once its lease passes: sent late, once, one notice', async () => {
    // The dead process claimed the missed tick 10 minutes after it, then died: its claim made its run.
    expect(await ctx.store.beginDigestTick({ tick: TICK, holder: 'a process that died', now: later(TICK, 10 * MINUTE), leaseMs: MINUTE, late: true })).not.toBeNull();
    const replica = ctx.start(later(TICK, 12 * MINUTE));
    await replica.scheduler.idle();
    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 0));
    await replica.clock.advance(2 * MINUTE);
    await replica.scheduler.idle();

    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 1));
    const [run] = await ctx.scheduledRuns();
    expect(run).toMatchObject({ outcome: 'sent', recapDate: THIS_WEEK, sent: READERS.length });
    expect(run!.message).toMatch(/^Resumed \(try 1\): Late: the 2025-07-14 09:00 UTC run was missed \(no server was running then\) and ran 13 min later/);
    expect(noticesIn(replica.lines)).toEqual(['[Launched Weekly] Resumed and finished (late): the 2025-07-14 recap, sent']);
    // A week later nothing more went to anyone for it.
    await replica.clock.advance(7 * 24 * HOUR - 10 * MINUTE);
    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 1));
  });

  it('last week unfinished and this Monday missed: a start 25 h later sends neither week and says "missed" once', async () => {
    expect(await ctx.store.beginDigestTick({ tick: LAST_TICK, holder: 'a process that died', now: LAST_TICK, leaseMs: MINUTE, late: false })).not.toBeNull();
    const replica = ctx.start(later(TICK, 25 * HOUR));
    await replica.clock.advance(30 * MINUTE);
    await replica.scheduler.idle();

    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 0));
    expect(ctx.copies(LAST_WEEK)).toEqual(READERS.map(() => 0));
    expect(noticesIn(replica.lines)).toEqual(['[Launched Weekly] Missed: the 2025-07-14 09:00 UTC run, the 2025-07-14 recap not sent']);
  });

  it('a late run that stops is not tried past its catch-up deadline, and the operator is told once', async () => {
    ctx.fake.outage = true;
    const replica = ctx.start(later(TICK, 5 * HOUR), { resume: { firstMs: 20 * MINUTE, maxMs: 20 * MINUTE } });
    await replica.scheduler.idle();
    await replica.clock.advance(3 * HOUR);
    await replica.scheduler.idle();
    ctx.fake.outage = false;
    await replica.clock.advance(HOUR);

    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 0));
    expect(noticesIn(replica.lines)).toEqual([
      expect.stringMatching(/^\[Launched Weekly\] Stopped: the 2025-07-14 recap, retrying at /),
      '[Launched Weekly] Missed: the 2025-07-14 09:00 UTC run, the 2025-07-14 recap not sent',
    ]);
    expect(replica.scheduler.nextResume()).toBeNull();
  });
}

/** Replicas starting together, or while another runs the tick, run it once between them. */
function replicasStartingTogether(ctx: TickContext) {
  it('a replica starting while another runs the tick on time runs nothing of its own', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    ctx.fake.onBatchAccepted = () => held;
    const onTime = ctx.start(later(TICK, -MINUTE));
    await onTime.scheduler.idle();
    const running = onTime.clock.advance(MINUTE);
    while (ctx.fake.messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const lateStarter = ctx.start(later(TICK, 2 * MINUTE));
    await lateStarter.scheduler.idle();
    release();
    await running;
    await onTime.scheduler.idle();
    await lateStarter.clock.advance(10 * MINUTE);
    await lateStarter.scheduler.idle();

    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 1));
    expect((await ctx.scheduledRuns()).map((run) => run.message)).toEqual([expect.stringMatching(/^Sent Week of July 14, 2025 to 30 subscribers\./)]);
    expect(noticesIn(lateStarter.lines)).toEqual([]);
  });

  it('two servers started together after a missed tick run it once', async () => {
    const [a, b] = [ctx.start(later(TICK, 10 * MINUTE)), ctx.start(later(TICK, 10 * MINUTE))];
    await Promise.all([a.scheduler.idle(), b.scheduler.idle()]);
    await Promise.all([a.clock.advance(10 * MINUTE), b.clock.advance(10 * MINUTE)]);
    await Promise.all([a.scheduler.idle(), b.scheduler.idle()]);

    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 1));
    const runs = await ctx.scheduledRuns();
    expect(runs).toHaveLength(1);
    expect(runs[0]!.message).toMatch(/^Late: the 2025-07-14 09:00 UTC run was missed/);
    expect([...noticesIn(a.lines), ...noticesIn(b.lines)]).toEqual(['[Launched Weekly] Weekly digest (late): sent, 30 messages sent']);
  });
}

/** A schedule moved, or a server down for longer than a week: what is told missed, and only once. */
function movedSchedulesAndLongOutages(ctx: TickContext) {
  it('moving DIGEST_CRON later in the week raises no false "Missed", and the new time sends the week', async () => {
    const monday = ctx.start(later(LAST_TICK, -MINUTE));
    await monday.clock.advance(2 * MINUTE);
    await monday.scheduler.stop();
    expect(ctx.copies(LAST_WEEK)).toEqual(READERS.map(() => 1));
    // Restarted this Monday at 08:00 with the schedule moved to 15:00.
    const moved = ctx.start(later(TICK, -HOUR), { cron: '0 15 * * 1' });
    await moved.scheduler.idle();
    expect(noticesIn(moved.lines)).toEqual([]);
    await moved.clock.advance(7 * HOUR);
    await moved.scheduler.idle();
    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 1));
    expect(noticesIn(moved.lines)).toEqual(['[Launched Weekly] Weekly digest: sent, 30 messages sent']);
  });

  it('DIGEST_CRON moved an hour later while down over the old tick: that tick is told missed, though a server of the new time started and died since', async () => {
    const monday = ctx.start(later(LAST_TICK, -MINUTE));
    await monday.clock.advance(2 * MINUTE);
    await monday.scheduler.stop();
    expect(ctx.copies(LAST_WEEK)).toEqual(READERS.map(() => 1));
    // Down over this Monday's 09:00; a server of the schedule moved to 10:00 started the next day
    // and died right after recording its start.
    await ctx.store.recordScheduleStart({ cron: '0 10 * * 1', timezone: 'UTC' }, later(TICK, 25 * HOUR));
    const moved = ctx.start(later(TICK, 26 * HOUR), { cron: '0 10 * * 1' });
    await moved.scheduler.idle();
    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 0));
    expect(noticesIn(moved.lines)).toEqual(['[Launched Weekly] Missed: the 2025-07-14 09:00 UTC run, the 2025-07-14 recap not sent']);
  });

  it('down for more than a week: both missed weeks are told, in one notice', async () => {
    // Servers ran the week before: its tick is recorded.
    const earlier = new Date('2025-06-30T09:00:00Z');
    expect(await ctx.store.beginDigestTick({ tick: earlier, holder: 'a server', now: earlier, leaseMs: MINUTE, late: false })).not.toBeNull();
    expect(await ctx.store.endDigestTick({ tick: earlier, holder: 'a server', now: earlier, state: 'done', recapDate: '2025-06-30' })).toBe(true);
    const replica = ctx.start(later(TICK, 26 * HOUR), { freshnessDays: 30 });
    await replica.scheduler.idle();
    expect(ctx.copies(THIS_WEEK)).toEqual(READERS.map(() => 0));
    expect(noticesIn(replica.lines)).toEqual(['[Launched Weekly] Missed: the 2025-07-14 09:00 UTC run, the 2025-07-14 recap not sent (and the 2025-07-07 09:00 UTC run)']);
    await replica.scheduler.stop();
    const again = ctx.start(later(TICK, 27 * HOUR));
    await again.scheduler.idle();
    expect(noticesIn(again.lines)).toEqual([]);
  });
}

for (const backend of storeBackends.filter((b) => b.name !== 'supabase')) {
  describe.skipIf(!backend.available)(`Missed and unfinished ticks on ${backend.name}`, () => {
    const ctx = {} as TickContext;
    let opened: OpenedBackend;
    let replicas: Replica[] = [];

    beforeAll(async () => {
      ctx.fake = await startFakeResend();
    });
    afterAll(() => ctx.fake?.close());
    beforeEach(async () => {
      opened = await backend.open();
      ctx.store = opened.store;
      for (const email of READERS) await addSignup(ctx.store, email, '/');
      ctx.fake.messages.length = 0;
      ctx.fake.onBatchAccepted = null;
    }, 120_000);
    afterEach(async () => {
      for (const replica of replicas) await replica.scheduler.stop();
      replicas = [];
      await opened?.cleanup();
    });

    ctx.start = (...args) => {
      const replica = startReplica(ctx.store, ctx.fake, ...args);
      replicas.push(replica);
      return replica;
    };
    ctx.copies = (week) => READERS.map((email) => ctx.fake.deliveredTo(email, week).length);
    ctx.scheduledRuns = async () => (await ctx.store.recentDigestRuns(20)).filter((run) => run.kind === 'scheduled');

    unfinishedAndMissedTicks(ctx);
    replicasStartingTogether(ctx);
    movedSchedulesAndLongOutages(ctx);
  });
}

/**
 * A six-field node-cron expression naming one second of one day of the year (UTC): its previous
 * tick is a year before, so only this one can be missed.
 */
const onceAt = (at: Date) => `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
const OPERATOR = 'operator@launched.test';
const PROCESS_RECAP = '2025-07-14';
/** The dead server's lease (3 s), one resume pause (1 s), the run and the notice's outbox poll. */
const WITHIN_MS = 10_000;

for (const kind of serverDataKinds) {
  describe.skipIf(!kind.available)(`A server killed right after claiming a missed tick, on ${kind.name}`, () => {
    const rig = useReadersDataAndProvider(kind, 'launched-weekly-claim-kill-', READERS);
    const servers: ServerProcess[] = [];
    afterAll(async () => {
      for (const server of servers) await server.stop('SIGKILL');
    });

    it('is taken over by the next start: everyone has the week once, within the deadline, marked late, one notice', async () => {
      const { fake, data } = rig;
      const port = await freePort();
      const tick = new Date(Math.floor((Date.now() - 30_000) / 1000) * 1000);
      const env = {
        ...data.env,
        PORT: String(port),
        SITE_URL: `http://127.0.0.1:${port}`,
        // The newest recap (2025) is old here: let the schedule still send it.
        DIGEST_FRESHNESS_DAYS: '3650',
        DIGEST_CRON: onceAt(tick),
        DIGEST_LEASE_SECONDS: '3',
        DIGEST_RESUME_FIRST_SECONDS: '1',
        RESEND_API_KEY: 're_test_claim_kill',
        RESEND_BASE_URL: fake.url,
        MAIL_FROM: 'Launched Weekly <news@launched.test>',
        UNSUBSCRIBE_SECRET: 'claim-kill-secret-0123456789abcdef0123456789abc',
        OPERATOR_EMAIL: OPERATOR,
        OUTBOX_POLL_SECONDS: '1',
      };
      const dist = ['dist/bin/server.js'];
      // The provider is down while the first server lives, so nothing of the week leaves before the kill.
      fake.outage = true;
      const first = await startServerProcess(env, undefined, undefined, dist);
      servers.push(first);
      await first.waitFor(/claimed the missed run of .*; running it now, marked late/);
      await first.stop('SIGKILL');
      fake.outage = false;

      const second = await startServerProcess(env, undefined, undefined, dist);
      servers.push(second);
      const restarted = Date.now();
      const notices = () => fake.messages.filter((m) => m.to.includes(OPERATOR));
      while (!(READERS.every((email) => fake.deliveredTo(email, PROCESS_RECAP).length > 0) && notices().length > 0) && Date.now() - restarted < WITHIN_MS) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(Date.now() - restarted).toBeLessThan(WITHIN_MS);
      await second.stop('SIGTERM');
      expect(READERS.map((email) => fake.deliveredTo(email, PROCESS_RECAP).length)).toEqual(READERS.map(() => 1));
      expect(notices().map((m) => m.subject)).toEqual(['[Launched Weekly] Resumed and finished (late): the 2025-07-14 recap, sent']);
      const store = await data.store();
      try {
        const runs = (await store.recentDigestRuns(10)).filter((run) => run.kind === 'scheduled');
        expect(runs[0]).toMatchObject({ outcome: 'sent', recapDate: PROCESS_RECAP });
        expect(runs[0]!.message).toMatch(/^Resumed \(try \d\): Late: the \d{4}-\d\d-\d\d \d\d:\d\d UTC run was missed \(no server was running then\)/);
        expect(runs.at(-1)).toMatchObject({ outcome: null });
      } finally {
        await store.close();
      }
    }, 240_000);
  });
}
