// A confirmation or welcome e-mail promised while the provider is down survives a deploy
// (SIGTERM) and a crash (SIGKILL) of the real server process, and arrives exactly once when the
// provider is back. Double mode with WELCOME_EMAIL=on, against the Resend stand-in with its outage
// switch, on PGlite and on PostgreSQL. The outbox's timings are shortened through its settings
// (polls every 0.2 s, claims of 3 s, retries at most 1 s apart; the defaults keep the same promise, "within 3
// minutes", see outbox-worker.test.ts), so no step waits on the clock longer than a few seconds.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAroundTests, chromiumAvailable } from '../support/browser.ts';
import { startFakeResend, type FakeMessage, type FakeResend } from '../support/fake-resend.ts';
import { freePort } from '../../scripts/free-port.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';

const THREE_MINUTES = 3 * 60_000;
/** The compiled server (as npm start runs it): no TypeScript loader to start each time. */
const startServer = (env: Record<string, string>) => startServerProcess(env, 120_000, new URL('../..', import.meta.url), ['dist/bin/server.js']);
const READER = 'restart.reader@example.com';

let browser: Browser;
chromiumAroundTests((connected) => (browser = connected));

const kinds = [
  {
    name: 'PGlite',
    available: true,
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'launched-weekly-outbox-'));
      return { env: { DATA_DIR: dir }, drop: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'launched-weekly-outbox-'));
      const db = await createTestDatabase();
      return {
        env: { DATA_DIR: dir, DATABASE_URL: db.url },
        drop: async () => {
          await db.drop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

const ofKind = (fake: FakeResend, kind: string) => fake.messages.filter((m) => m.to.includes(READER) && m.tags.some((t) => t.name === 'kind' && t.value === kind));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Three times the longest pause between two tries and a poll, and a lease: room for any repeat. */
const REPEAT_WINDOW_MS = 3 * (1_000 + 200) + 3_000;

async function arrival(fake: FakeResend, kind: string, withinMs: number): Promise<{ messages: FakeMessage[]; ms: number }> {
  const since = Date.now();
  while (ofKind(fake, kind).length === 0 && Date.now() - since < withinMs) await sleep(100);
  const ms = Date.now() - since;
  // A second copy would come from a repeat: give every worker time for a few more tries.
  await sleep(REPEAT_WINDOW_MS);
  return { messages: ofKind(fake, kind), ms };
}

/** Until the provider has refused one more request than now (a worker tried), within 10 s. */
async function oneMoreRefusal(fake: FakeResend): Promise<void> {
  const refusals = () => fake.requests.filter((r) => r.kind === 'outage').length;
  const before = refusals();
  const since = Date.now();
  while (refusals() === before && Date.now() - since < 10_000) await sleep(100);
}

for (const kind of kinds) {
  describe.skipIf(!chromiumAvailable || !kind.available)(`The outbox across SIGTERM and SIGKILL on ${kind.name}`, () => {
    let fake: FakeResend;
    let server: ServerProcess | null = null;
    let env: Record<string, string>;
    let drop: () => Promise<void>;
    let base: string;

    beforeAll(async () => {
      fake = await startFakeResend();
      const opened = await kind.open();
      drop = opened.drop;
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      env = {
        ...opened.env,
        PORT: String(port),
        SITE_URL: base,
        DIGEST_CRON: 'off',
        SIGNUP_CONFIRMATION: 'double',
        WELCOME_EMAIL: 'on',
        RESEND_API_KEY: 're_test_outbox',
        RESEND_BASE_URL: fake.url,
        MAIL_FROM: 'Launched Weekly <news@launched.test>',
        UNSUBSCRIBE_SECRET: 'outbox-restart-secret-0123456789abcdef0123456789',
        RATE_LIMIT_PER_MINUTE: '1000',
        OUTBOX_POLL_SECONDS: '0.2',
        // A killed server's claim keeps the message until its lease ends: short, so the wait is too.
        OUTBOX_LEASE_SECONDS: '3',
        OUTBOX_RETRY_MAX_SECONDS: '1',
      };
    }, 60_000);

    afterAll(async () => {
      await server?.stop('SIGKILL');
      await fake?.close();
      await drop?.();
    });

    /** A deploy and a crash while the provider is down: SIGTERM, start, SIGKILL, start. */
    async function deployAndCrash() {
      expect(await server!.stop('SIGTERM')).toBe(0);
      server = await startServer(env);
      // Let the new process try (and fail) at least once before it dies.
      await oneMoreRefusal(fake);
      await server.stop('SIGKILL');
      server = await startServer(env);
    }

    it('delivers the confirmation exactly once after a deploy and a crash during a provider outage', async () => {
      fake.outage = true;
      server = await startServer(env);
      const answer = await fetch(`${base}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: JSON.stringify({ email: READER, source: '/' }) });
      expect(answer.status).toBe(202);
      await deployAndCrash();
      expect(fake.requests.filter((r) => r.kind === 'outage').length).toBeGreaterThan(0);
      expect(ofKind(fake, 'confirmation')).toHaveLength(0);

      fake.outage = false;
      const { messages, ms } = await arrival(fake, 'confirmation', THREE_MINUTES);
      expect(messages).toHaveLength(1);
      expect(ms).toBeLessThan(THREE_MINUTES);
      expect(messages[0]!.idempotencyKey).toMatch(/^outbox\/[0-9a-f-]{36}\/1$/);
    }, 600_000);

    it('delivers the welcome exactly once after the button is pressed, across the same deploy and crash', async () => {
      const [confirmation] = ofKind(fake, 'confirmation');
      const link = /https?:\/\/[^\s"<>]+\/confirm\?token=[^\s"<>]+/.exec(confirmation!.text ?? '')?.[0];
      expect(link).toBeDefined();
      fake.outage = true;
      const page = await browser.newPage();
      try {
        await page.goto(link!);
        await page.getByRole('button', { name: 'Confirm my subscription' }).click();
        await page.getByRole('heading', { name: 'You are subscribed' }).waitFor();
      } finally {
        await page.close();
      }
      await deployAndCrash();
      expect(ofKind(fake, 'welcome')).toHaveLength(0);

      fake.outage = false;
      const { messages, ms } = await arrival(fake, 'welcome', THREE_MINUTES);
      expect(messages).toHaveLength(1);
      expect(ms).toBeLessThan(THREE_MINUTES);
      expect(ofKind(fake, 'confirmation')).toHaveLength(1);
    }, 600_000);
  });
}
