// A scheduled run cut short mid-send is finished by another server, or by the next start, once its
// holder's claim on the tick has passed: every subscriber gets exactly one copy (the first batch is
// repeated under its stored key, which the provider answers from its cache). In-process on a manual
// clock, on PGlite and PostgreSQL: a replica stopped mid-send (as a deploy stops it) is taken over
// by another; a holder that renews is not. Then once with the real server process (dist, as npm
// start runs it), SIGKILLed right after the provider accepted its first batch and started again,
// with short timings from its settings (DIGEST_LEASE_SECONDS, DIGEST_RESUME_FIRST_SECONDS).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../server/store/types.ts';
import { noticesIn, startReplica, type Replica } from '../support/digest-scheduler-harness.ts';
import { startFakeResend, type FakeResend } from '../support/fake-resend.ts';
import { freePort } from '../../scripts/free-port.ts';
import { serverDataKinds, startServerProcess, useReadersDataAndProvider, type ServerProcess } from '../support/server-process.ts';
import { storeBackends, type OpenedBackend } from '../support/store-backends.ts';
import { addSignup } from '../support/store-ops.ts';

const READERS = 150;
const RECAP = '2025-07-14';
const TICK = new Date(`${RECAP}T09:00:00Z`);
const MINUTE = 60_000;
const everyone = Array.from({ length: READERS }, (_, i) => `crash${String(i).padStart(3, '0')}@example.com`);
const copies = (fake: FakeResend) => everyone.map((email) => fake.deliveredTo(email, RECAP).length);

for (const backend of storeBackends.filter((b) => b.name !== 'supabase')) {
  describe.skipIf(!backend.available)(`A scheduled run cut short mid-send, in-process on ${backend.name}`, () => {
    let opened: OpenedBackend;
    let store: Store;
    let fake: FakeResend;
    let replicas: Replica[] = [];

    beforeAll(async () => {
      fake = await startFakeResend();
    });
    afterAll(() => fake?.close());
    beforeEach(async () => {
      opened = await backend.open();
      store = opened.store;
      for (const email of everyone) await addSignup(store, email, '/');
      fake.messages.length = 0;
    }, 120_000);
    afterEach(async () => {
      for (const replica of replicas) await replica.scheduler.stop();
      replicas = [];
      fake.onBatchAccepted = null;
      await opened?.cleanup();
    });

    it('stopped after its first batch, is finished by another replica once its claim has passed: one copy each, "Resumed (try 1)"', async () => {
      // Without the start-up catch-up: on this fresh list the week before counts as missed, and
      // which replica records and tells that is a race, beside the point here.
      const first = startReplica(store, fake, new Date(TICK.getTime() - MINUTE), { catchUpHours: 0 });
      const second = startReplica(store, fake, new Date(TICK.getTime() - MINUTE), { catchUpHours: 0 });
      replicas.push(first, second);
      await Promise.all([first.scheduler.idle(), second.scheduler.idle()]);
      let stopping: Promise<void> | null = null;
      fake.onBatchAccepted = (accepted) => {
        if (accepted === 1) stopping = first.scheduler.stop();
      };
      await first.clock.advance(MINUTE);
      await stopping;
      fake.onBatchAccepted = null;
      expect(fake.forRecap(RECAP)).toHaveLength(100);
      // The second replica's own tick finds the first one's claim and waits for it to pass.
      await second.clock.advance(MINUTE);
      await second.scheduler.idle();
      expect(fake.forRecap(RECAP)).toHaveLength(100);
      await second.clock.advance(2 * MINUTE);
      await second.scheduler.idle();

      expect(copies(fake)).toEqual(everyone.map(() => 1));
      const runs = (await store.recentDigestRuns(10)).filter((run) => run.kind === 'scheduled');
      expect(runs.map((run) => run.outcome)).toEqual(['sent', 'stopped']);
      expect(runs[0]!.message).toMatch(/^Resumed \(try 1\): Sent Week of July 14, 2025 to 50 subscribers\./);
      expect(noticesIn(second.lines)).toEqual(['[Launched Weekly] Resumed and finished: the 2025-07-14 recap, sent']);
    });

    it('a holder that keeps renewing its claim is not taken over, however long its run takes', async () => {
      expect(await store.beginDigestTick({ tick: TICK, holder: 'a slow live server', now: TICK, leaseMs: MINUTE, late: false })).not.toBeNull();
      const replica = startReplica(store, fake, new Date(TICK.getTime() + MINUTE / 2));
      replicas.push(replica);
      for (let step = 1; step <= 10; step++) {
        await store.renewDigestTick(TICK, 'a slow live server', new Date(TICK.getTime() + (step + 1) * MINUTE));
        await replica.clock.advance(MINUTE);
        await replica.scheduler.idle();
      }
      expect(copies(fake)).toEqual(everyone.map(() => 0));
      expect((await store.recentDigestRuns(10)).filter((run) => run.kind === 'scheduled')).toHaveLength(1);
    });
  });
}

/** A six-field node-cron expression (with seconds) that fires once a day, at `at`. */
const dailyAt = (at: Date) => `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
/** The dead server's lease (3 s), a resume pause (1 s), the rest of the sending and the replays. */
const WITHIN_MS = 10_000;

for (const kind of serverDataKinds) {
  describe.skipIf(!kind.available)(`A scheduled run killed mid-send on ${kind.name}`, () => {
    const rig = useReadersDataAndProvider(kind, 'launched-weekly-crash-', everyone);
    let server: ServerProcess | null = null;

    afterAll(async () => {
      await server?.stop('SIGKILL');
    });

    it('is resumed by the next process, and everyone has exactly one copy within 10 s of its start', async () => {
      const { fake, data } = rig;
      const port = await freePort();
      const env = {
        ...data.env,
        PORT: String(port),
        SITE_URL: `http://127.0.0.1:${port}`,
        // The newest recap (2025) is a year old here: let the schedule still send it.
        DIGEST_FRESHNESS_DAYS: '3650',
        RESEND_API_KEY: 're_test_crash',
        RESEND_BASE_URL: fake.url,
        MAIL_FROM: 'Launched Weekly <news@launched.test>',
        UNSUBSCRIBE_SECRET: 'crash-resume-secret-0123456789abcdef0123456789',
        // A tick a few seconds after the start (caught up late if the start takes longer).
        DIGEST_CRON: dailyAt(new Date(Math.ceil((Date.now() + 8_000) / 1000) * 1000)),
        DIGEST_LEASE_SECONDS: '3',
        DIGEST_RESUME_FIRST_SECONDS: '1',
      };
      const dist = ['dist/bin/server.js'];
      // The first accepted batch kills the server before its answer arrives.
      let killed = false;
      fake.onBatchAccepted = async (accepted) => {
        if (accepted !== 1) return;
        await server!.stop('SIGKILL');
        killed = true;
      };
      server = await startServerProcess(env, undefined, undefined, dist);
      const started = Date.now();
      while (!killed && Date.now() - started < WITHIN_MS) await new Promise((resolve) => setTimeout(resolve, 100));
      fake.onBatchAccepted = null;
      expect(fake.forRecap(RECAP)).toHaveLength(100);

      server = await startServerProcess(env, undefined, undefined, dist);
      const restarted = Date.now();
      const done = () => everyone.every((email) => fake.deliveredTo(email, RECAP).length > 0);
      while (!done() && Date.now() - restarted < WITHIN_MS) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(done()).toBe(true);
      expect(copies(fake)).toEqual(everyone.map(() => 1));
      expect(fake.requests.some((r) => r.kind === 'replayed')).toBe(true);
      expect(server.output()).toMatch(/is unfinished; it is taken over after/);
      await server.stop('SIGTERM');
      server = null;
      const store = await data.store();
      try {
        const runs = (await store.recentDigestRuns(10)).filter((r) => r.kind === 'scheduled');
        expect(runs.at(-1)).toMatchObject({ outcome: null });
        expect(runs[0]).toMatchObject({ outcome: 'sent', recapDate: RECAP });
        expect(runs[0]!.message).toMatch(/^Resumed \(try \d+\): (Late: .*: )?Sent Week of July 14, 2025 to \d+ subscribers\./);
      } finally {
        await store.close();
      }
    }, 240_000);
  });
}
