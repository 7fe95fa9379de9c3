// Issue 21: the server is SIGKILLed right after the provider accepted the first batch of a
// scheduled run and started again 5 s later. With no command run and the default resume and lease
// timing, the new process resumes the interrupted send once the dead one's lease has expired: every
// subscriber gets exactly one copy within 6 minutes (the first batch is repeated under its stored
// key, which the provider answers from its cache). On PGlite and PostgreSQL, with the real server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSignup } from './support/store-ops.ts';
import { startFakeResend, type FakeResend } from './support/fake-resend.ts';
import { freePort } from './support/ports.ts';
import { serverDataKinds, startServerProcess, type ServerData, type ServerProcess } from './support/server-process.ts';

const READERS = 150;
const SIX_MINUTES = 6 * 60_000;
const RECAP = '2025-07-14';

/** A six-field node-cron expression (with seconds) that fires once a day, `ms` from now. */
function dailyIn(ms: number): string {
  const at = new Date(Math.ceil((Date.now() + ms) / 1000) * 1000);
  return `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
}

for (const kind of serverDataKinds) {
  describe.skipIf(!kind.available)(`A scheduled run killed mid-send on ${kind.name}`, () => {
    let fake: FakeResend;
    let server: ServerProcess | null = null;
    let opened: ServerData;
    const everyone = Array.from({ length: READERS }, (_, i) => `crash${String(i).padStart(3, '0')}@example.com`);

    beforeAll(async () => {
      fake = await startFakeResend();
      opened = await kind.open('launched-weekly-crash-');
      const store = await opened.store();
      for (const email of everyone) await addSignup(store, email, '/');
      await store.close();
    }, 120_000);

    afterAll(async () => {
      await server?.stop('SIGKILL');
      await fake?.close();
      await opened?.drop();
    });

    it('is resumed by the next process, and everyone has exactly one copy within 6 minutes', async () => {
      const port = await freePort();
      const env = {
        ...opened.env,
        PORT: String(port),
        SITE_URL: `http://127.0.0.1:${port}`,
        // The newest recap (2025) is a year old here: let the schedule still send it.
        DIGEST_FRESHNESS_DAYS: '3650',
        RESEND_API_KEY: 're_test_crash',
        RESEND_BASE_URL: fake.url,
        MAIL_FROM: 'Launched Weekly <news@launched.test>',
        UNSUBSCRIBE_SECRET: 'crash-resume-secret-0123456789abcdef0123456789',
        DIGEST_CRON: dailyIn(60_000),
      };
      // The first accepted batch kills the server before its answer arrives.
      let killedAt = 0;
      fake.onBatchAccepted = async (accepted) => {
        if (accepted !== 1) return;
        await server!.stop('SIGKILL');
        killedAt = Date.now();
      };
      server = await startServerProcess(env);
      while (killedAt === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      fake.onBatchAccepted = null;
      expect(fake.forRecap(RECAP)).toHaveLength(100);

      await new Promise((resolve) => setTimeout(resolve, 5_000));
      server = await startServerProcess(env);
      const done = () => everyone.every((email) => fake.deliveredTo(email, RECAP).length > 0);
      while (!done() && Date.now() - killedAt < SIX_MINUTES) await new Promise((resolve) => setTimeout(resolve, 500));
      const tookMs = Date.now() - killedAt;
      expect(done()).toBe(true);
      expect(tookMs).toBeLessThan(SIX_MINUTES);
      expect(everyone.map((email) => fake.deliveredTo(email, RECAP).length)).toEqual(everyone.map(() => 1));
      expect(fake.requests.some((r) => r.kind === 'replayed')).toBe(true);
      expect(server.output()).toMatch(/did not finish \(interrupted\); resuming it at/);
      await server.stop('SIGTERM');
      server = null;
      const store = await opened.store();
      try {
        const runs = (await store.recentDigestRuns(10)).filter((r) => r.kind === 'scheduled');
        expect(runs.at(-1)).toMatchObject({ outcome: null });
        expect(runs[0]).toMatchObject({ outcome: 'sent', recapDate: RECAP });
        expect(runs[0]!.message).toMatch(/^Resumed \(try \d+\): Sent Week of July 14, 2025 to \d+ subscribers\./);
      } finally {
        await store.close();
      }
      console.info(`[${kind.name}] all ${READERS} have exactly one copy ${(tookMs / 1000).toFixed(0)} s after the kill`);
    }, 600_000);
  });
}
