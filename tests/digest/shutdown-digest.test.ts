// SIGTERM to the real server process while its scheduled digest has a batch with the provider:
// the digest is told to stop at once (with the HTTP drain, not after it), the batch in flight is
// answered and recorded, nothing more is sent, and the process exits 0 within the 10 s that Docker
// and Kubernetes give before SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResend, type FakeResend } from '../support/fake-resend.ts';
import { freePort } from '../../scripts/free-port.ts';
import { insertReaders, postgresUrl, useConnectedTestDatabase } from '../support/postgres.ts';

const ROOT = new URL('../..', import.meta.url);
const SUBSCRIBERS = 600;
const EXIT_BOUND_MS = 10_000;
/** How long the provider holds the answer to the batch in flight when the signal comes. */
const ANSWER_DELAY_MS = 2_000;
/** How long a request body keeps arriving after the signal, holding the HTTP drain. */
const SLOW_UPLOAD_MS = 3_000;

describe.skipIf(!postgresUrl)('SIGTERM while the scheduled digest sends', () => {
  const database = useConnectedTestDatabase();
  let fake: FakeResend;
  let child: ChildProcess;
  let output = '';

  beforeAll(async () => {
    fake = await startFakeResend();
    fake.keepBodies = false;
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await fake?.close();
  });

  it('records the batch in flight, sends nothing after it, and exits 0 within 10 s', async () => {
    const { db, sql } = database;
    const port = await freePort();
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => {
      child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          DATABASE_URL: db.url,
          RESEND_API_KEY: 're_test_shutdown',
          RESEND_BASE_URL: fake.url,
          MAIL_FROM: 'Launched Weekly <digest@launchedweekly.test>',
          UNSUBSCRIBE_SECRET: 'shutdown-digest-secret-0123456789abcdef0123456789',
          // Every few seconds, and any recap counts as fresh: the newest one goes out.
          DIGEST_CRON: '*/3 * * * * *',
          DIGEST_FRESHNESS_DAYS: '100000',
          HOST: '127.0.0.1',
          PORT: String(port),
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => resolve({ code, at: Date.now() }));
    });
    // The migrations ran at start; the readers arrive before the first tick can find them.
    for (let i = 0; i < 900 && !/Launched Weekly on http:/.test(output); i++) await delay(100);
    expect(output).toMatch(/Launched Weekly on http:/);
    await insertReaders(sql, SUBSCRIBERS);

    // A request still arriving when the signal comes keeps the HTTP drain busy for 3 s (its body
    // completes then); the digest must not wait for that drain to be told to stop.
    let slowUpload: Socket | undefined;
    let signalledAt = 0;
    fake.onBatchAccepted = async (accepted) => {
      if (accepted === 1) {
        slowUpload = connect(port, '127.0.0.1');
        slowUpload.on('error', () => {});
        slowUpload.write(`POST /api/subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":`);
        await delay(200);
      }
      if (accepted !== 2) return;
      signalledAt = Date.now();
      child.kill('SIGTERM');
      setTimeout(() => slowUpload?.write(`"slow@example.com"${' '.repeat(100 - 9 - 18 - 1)}}`), SLOW_UPLOAD_MS);
      await delay(ANSWER_DELAY_MS);
    };
    const { code, at } = await exited;
    fake.onBatchAccepted = null;
    slowUpload?.destroy();

    expect(signalledAt, output).toBeGreaterThan(0);
    expect(code, output).toBe(0);
    expect(at - signalledAt).toBeLessThan(EXIT_BOUND_MS);
    // The batch in flight was answered after the signal and recorded; nothing went out after it.
    expect(fake.acceptedBatches).toBe(2);
    const batches = (await sql.query<{ state: string; n: number }>('select state, count(*)::int as n from public.digest_batches group by state')).rows;
    expect(batches).toEqual([{ state: 'sent', n: 2 }]);
    expect((await sql.query<{ n: number }>('select count(*)::int as n from public.digest_deliveries')).rows[0]!.n).toBe(200);
    const runs = (await sql.query<{ kind: string; outcome: string; sent: number; message: string }>('select kind, outcome, sent, message from public.digest_runs where sent > 0')).rows;
    expect(runs).toEqual([expect.objectContaining({ kind: 'scheduled', outcome: 'stopped', sent: 200 })]);
    expect(runs[0]!.message).toContain('stopped on request');
    // The drain waited for the upload, and the digest had stopped long before it ended.
    expect(at - signalledAt).toBeGreaterThanOrEqual(SLOW_UPLOAD_MS);
    expect(output).not.toContain('still running after');
    expect(output).toContain('Stopped cleanly');
  }, 150_000);
});
