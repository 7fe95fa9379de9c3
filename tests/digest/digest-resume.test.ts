// A Monday that heals itself, in-process on a manual clock (an hour in a second), on PGlite and
// PostgreSQL. Single mode, 150 subscribers, the provider down from the scheduled moment for 2
// minutes: the scheduled run stops, the scheduler tries again by itself (DIGEST_RESUME_FIRST_SECONDS,
// then doubling), and once the provider is back every subscriber has exactly one copy, --history
// shows the stopped run and its resumption, and the operator was told once of the stop and once of
// the completion (naming 150 sent). With the defaults, all of it is over within 8 minutes.
import { afterAll, describe, expect, it } from 'vitest';
import { noticesIn, startReplica, type Replica } from '../support/digest-scheduler-harness.ts';
import { useStoreAndProvider } from '../support/store-and-provider.ts';
import { storeBackends } from '../support/store-backends.ts';

const READERS = 150;
const RECAP = '2025-07-14';
const TICK = new Date(`${RECAP}T09:00:00Z`);
const MINUTE = 60_000;
const everyone = Array.from({ length: READERS }, (_, i) => `reader${String(i).padStart(3, '0')}@example.com`);

for (const backend of storeBackends.filter((b) => b.name !== 'supabase')) {
  describe.skipIf(!backend.available)(`A stopped Monday resumes by itself on ${backend.name}`, () => {
    const rig = useStoreAndProvider(backend, { readers: everyone });
    let replica: Replica | undefined;
    afterAll(async () => {
      await replica?.scheduler.stop();
    });

    it('sends every subscriber exactly one copy after the provider returns, with no command run, and tells the operator twice', async () => {
      const { store, fake } = rig;
      fake.outage = true;
      replica = startReplica(store, fake, new Date(TICK.getTime() - MINUTE), { catchUpHours: 0 });
      await replica.scheduler.idle();
      await replica.clock.advance(MINUTE + 2 * MINUTE);
      expect(fake.requests.filter((r) => r.kind === 'outage').length).toBeGreaterThan(0);
      expect(fake.forRecap(RECAP)).toEqual([]);
      fake.outage = false;
      await replica.clock.advance(5 * MINUTE);
      await replica.scheduler.idle();

      expect(everyone.map((email) => fake.deliveredTo(email, RECAP).length)).toEqual(everyone.map(() => 1));
      expect(replica.scheduler.nextResume()).toBeNull();
      // An hour more: nothing more goes to anyone.
      await replica.clock.advance(60 * MINUTE);
      expect(everyone.map((email) => fake.deliveredTo(email, RECAP).length)).toEqual(everyone.map(() => 1));

      const runs = (await store.recentDigestRuns(20)).filter((r) => r.kind === 'scheduled').reverse();
      expect(runs[0]).toMatchObject({ outcome: 'stopped', recapDate: RECAP });
      expect(runs[0]!.message).toMatch(/^Stopped after sending Week of July 14, 2025 to 0 subscribers: the provider kept failing/);
      expect(runs.at(-1)).toMatchObject({ outcome: 'sent', sent: READERS });
      expect(runs.at(-1)!.message).toMatch(/^Resumed \(try \d+\): Sent Week of July 14, 2025 to 150 subscribers\./);
      expect(runs.slice(1).every((r) => /^Resumed \(try \d+\)/.test(r.message ?? ''))).toBe(true);

      const notices = noticesIn(replica.lines);
      expect(notices).toEqual([expect.stringMatching(/^\[Launched Weekly\] Stopped: the 2025-07-14 recap, retrying at /), '[Launched Weekly] Resumed and finished: the 2025-07-14 recap, sent']);
      const finished = replica.lines.find((line) => line.startsWith('[Launched Weekly] Resumed and finished'))!;
      expect(finished).toContain('This run: 150 sent');
      expect(finished).toMatch(/The 2025-07-14 recap so far: 150 sent · \d+ failed · 0 unknown · 0 skipped · bounces 0 \(0\.00 %\) · complaints 0 \(0\.00 %\)/);
      expect(finished).toContain('Next scheduled run: 2025-07-21 09:00 UTC.');
      // Through the durable outbox too, for OPERATOR_EMAIL.
      expect((await store.outboxSummary(7)).queued).toBeGreaterThanOrEqual(2);
    });
  });
}
