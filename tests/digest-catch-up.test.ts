// Issue 43, item 1: a DIGEST_CRON tick that fell while no server ran is caught up when one is back.
// With the real server process, real time and the fake Resend: the server stopped 20 s before its
// tick and started 60 s after it sends everyone exactly one copy, the run is marked late in the
// history and the operator is told once; two servers started together after a missed tick run it
// once; a tick 2 days old (past DIGEST_CATCHUP_HOURS) is not run, and told once, across restarts.
import { afterEach, describe, expect, it } from 'vitest';
import { historyTable } from '../jobs/digest/report.ts';
import { startFakeResend, type FakeResend } from './support/fake-resend.ts';
import { freePort } from './support/ports.ts';
import { serverDataKinds, startServerProcess, type ServerData, type ServerProcess } from './support/server-process.ts';
import { addSignup } from './support/store-ops.ts';

const READERS = 40;
const RECAP = '2025-07-14';
const OPERATOR = 'operator@launched.test';
const FIVE_MINUTES = 5 * 60_000;

/**
 * A six-field node-cron expression naming one second of one day of the year (UTC): its previous
 * tick is a year before, so a server started earlier has no missed tick of its own to catch up.
 */
function onceAt(at: Date): string {
  return `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
}

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
const everyone = Array.from({ length: READERS }, (_, i) => `late${String(i).padStart(3, '0')}@example.com`);

async function until(done: () => boolean, deadline: number): Promise<void> {
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
}

for (const kind of serverDataKinds) {
  describe.skipIf(!kind.available)(`Missed ticks on ${kind.name}`, () => {
    let fake: FakeResend;
    let opened: ServerData;
    let servers: ServerProcess[] = [];

    afterEach(async () => {
      for (const server of servers) await server.stop('SIGKILL');
      servers = [];
      await fake?.close();
      await opened?.drop();
    });

    // A provider of its own per test: each new database numbers its outbox from 1 again, and the
    // provider would answer a repeated key outbox/1 from its cache.
    async function openWithReaders() {
      fake = await startFakeResend();
      opened = await kind.open('launched-weekly-catch-up-');
      const store = await opened.store();
      for (const email of everyone) await addSignup(store, email, '/');
      await store.close();
    }

    async function envFor(cron: string) {
      const port = await freePort();
      return {
        ...opened.env,
        PORT: String(port),
        SITE_URL: `http://127.0.0.1:${port}`,
        // The newest recap (2025) is a year old here: let the schedule still send it.
        DIGEST_FRESHNESS_DAYS: '3650',
        RESEND_API_KEY: 're_test_catch_up',
        RESEND_BASE_URL: fake.url,
        MAIL_FROM: 'Launched Weekly <news@launched.test>',
        UNSUBSCRIBE_SECRET: 'catch-up-secret-0123456789abcdef0123456789abcd',
        OPERATOR_EMAIL: OPERATOR,
        OUTBOX_POLL_SECONDS: '1',
        DIGEST_CRON: cron,
      };
    }

    async function history() {
      const store = await opened.store();
      try {
        return await store.recentDigestRuns(10);
      } finally {
        await store.close();
      }
    }

    const notices = () => fake.messages.filter((m) => m.to.includes(OPERATOR));
    const copies = () => everyone.map((email) => fake.deliveredTo(email, RECAP).length);

    it('stopped 20 s before its tick and started 60 s after: everyone has one copy within 5 minutes, the run is marked late, the operator told once', async () => {
      await openWithReaders();
      const tick = Math.ceil((Date.now() + 75_000) / 1000) * 1000;
      const env = await envFor(onceAt(new Date(tick)));
      const first = await startServerProcess(env);
      servers.push(first);
      // The scenario needs the first server up before it is stopped.
      expect(Date.now()).toBeLessThan(tick - 20_000);
      await sleepUntil(tick - 20_000);
      await first.stop('SIGTERM');
      await sleepUntil(tick + 60_000);

      const second = await startServerProcess(env);
      servers.push(second);
      await until(() => copies().every((n) => n > 0) && notices().length > 0, tick + FIVE_MINUTES);
      expect(Date.now()).toBeLessThan(tick + FIVE_MINUTES);
      expect(copies()).toEqual(everyone.map(() => 1));
      await second.waitFor(/Launched Weekly\] Weekly digest \(late\)/);
      await second.stop('SIGTERM');

      const scheduled = (await history()).filter((run) => run.kind === 'scheduled');
      expect(scheduled).toHaveLength(1);
      expect(scheduled[0]).toMatchObject({ outcome: 'sent', recapDate: RECAP, sent: READERS });
      expect(scheduled[0]!.message).toMatch(/^Late: the \d{4}-\d\d-\d\d \d\d:\d\d UTC run was missed \(no server was running then\) and ran \d+ min later, when a server started: Sent /);
      expect(historyTable(scheduled)).toMatch(/scheduled .* sent .* Late: the /);
      expect(notices()).toHaveLength(1);
      expect(notices()[0]!.subject).toMatch(/^\[Launched Weekly\] Weekly digest \(late\): sent, 40 messages sent$/);
      expect(notices()[0]!.text).toMatch(/The scheduled run finished: Late: the .* run was missed \(no server was running then\)/);
    }, 600_000);

    it.skipIf(kind.name === 'PGlite')('two servers started together after a missed tick run it once', async () => {
      await openWithReaders();
      const tick = new Date(Math.floor((Date.now() - 10 * 60_000) / 1000) * 1000);
      const cron = onceAt(tick);
      const started = await Promise.all([startServerProcess(await envFor(cron)), startServerProcess(await envFor(cron))]);
      servers.push(...started);
      await until(() => copies().every((n) => n > 0) && notices().length > 0, Date.now() + FIVE_MINUTES);
      // Each has decided: run it, or leave it to the other (which claimed it, or had begun it).
      for (const server of started) await server.waitFor(/running it now, marked late|already taken up by another server|was held; nothing to catch up/);
      // One that took the other's run for an interrupted one looks again before its try, and adds no run.
      for (const server of started) if (/did not finish \(interrupted\); resuming it/.test(server.output())) await server.waitFor(/finished meanwhile \(another server ran it\); nothing to resume/, 120_000);
      const lines = started.map((server) => (/running it now, marked late/.test(server.output()) ? 'ran' : 'left it'));
      expect(lines.sort()).toEqual(['left it', 'ran']);
      for (const server of started) await server.stop('SIGTERM');
      expect(copies()).toEqual(everyone.map(() => 1));
      expect((await history()).filter((run) => run.kind === 'scheduled')).toHaveLength(1);
      expect(notices()).toHaveLength(1);
    }, 600_000);

    it('a tick 2 days old is past the deadline: no run, one notice, and a restart does not tell it again', async () => {
      await openWithReaders();
      const tick = new Date(Math.floor((Date.now() - 2 * 24 * 3_600_000) / 1000) * 1000);
      const env = await envFor(onceAt(tick));
      const first = await startServerProcess(env);
      servers.push(first);
      await first.waitFor(/was missed and is past DIGEST_CATCHUP_HOURS; not run/);
      await until(() => notices().length > 0, Date.now() + 60_000);
      await first.stop('SIGTERM');
      const second = await startServerProcess(env);
      servers.push(second);
      await second.waitFor(/already taken up by another server or an earlier start/);
      await second.stop('SIGTERM');

      expect(await history()).toEqual([]);
      expect(copies()).toEqual(everyone.map(() => 0));
      expect(notices()).toHaveLength(1);
      expect(notices()[0]!.subject).toMatch(/^\[Launched Weekly\] Missed: the \d{4}-\d\d-\d\d \d\d:\d\d UTC run, the 2025-07-14 recap not sent$/);
      expect(notices()[0]!.text).toMatch(/A server started 2\.0 days later, past DIGEST_CATCHUP_HOURS \(6 h\), so it was not run late and nothing was sent\./);
    }, 300_000);
  });
}
