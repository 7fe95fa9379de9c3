// What the operator reads: one line per request (method, path, status, duration), JSON in
// production and short readable lines in development, and never an e-mail address, a token or a
// secret, whichever way a request goes (saved, refused, the database failing).
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp, type AppConfig } from '../../server/app.ts';
import { createLogger } from '../../server/http/logger.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { createUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { closeLoopback, listenOnLoopback } from '../support/loopback.ts';

const SECRET = 'logging-test-unsubscribe-secret-0123456789abcdef';
const ADDRESSES = ['Reader.One@Example.com', 'reader.two@example.org', 'not-an-address@', 'broken@database.example'];
// Anything that still looks like a whole address (masked ones read r***@example.com).
const ANY_ADDRESS = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/;

interface Harness {
  url: string;
  store: Store;
  output: () => string;
  close: () => Promise<void>;
}

async function startApp(env: AppConfig['env'], pretty: boolean): Promise<Harness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-logging-'));
  const store = await openPGliteStore(dataDir);
  let captured = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      captured += chunk.toString();
      callback();
    },
  });
  const logger = createLogger({ level: 'info', pretty, destination });
  const server: Server = createServer();
  const url = await listenOnLoopback(server);
  const config: AppConfig = { env, siteUrl: url, trustProxy: 0, rateLimitPerMinute: 1000, unsubscribeSecret: SECRET, resendWebhookSecret: undefined };
  server.on('request', createApp({ config, store, renderer: await loadBuiltRenderer(), logger, assets: { kind: 'static', dir: CLIENT_DIST } }));
  return {
    url,
    store,
    output: () => captured,
    async close() {
      await closeLoopback(server);
      await store.close().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The same sequence in both modes: a signup, a refused one, a form signup, an unsubscribe link, one the database fails. */
async function exercise(app: Harness) {
  const json = (email: string) =>
    fetch(`${app.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  const statuses: number[] = [];
  statuses.push((await json(ADDRESSES[0]!)).status);
  statuses.push((await json(ADDRESSES[2]!)).status);
  const form = await fetch(`${app.url}/api/subscribe`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: ADDRESSES[1]!, source: '/' }),
    redirect: 'manual',
  });
  statuses.push(form.status);
  const subscriber = await app.store.findSubscriberByEmail('reader.one@example.com');
  const token = createUnsubscribeToken(subscriber!.id, SECRET);
  statuses.push((await fetch(`${app.url}/unsubscribe?token=${encodeURIComponent(token)}`)).status);
  await app.store.close();
  statuses.push((await json(ADDRESSES[3]!)).status);
  return { statuses, token };
}

type Exercised = Awaited<ReturnType<typeof exercise>> & { output: () => string };

/** Starts the app in `env` and exercises it before the calling describe's tests, and closes it after them: what each mode's tests read. */
function exercisedApp(env: AppConfig['env'], pretty: boolean): Exercised {
  let app: Harness | undefined;
  const exercised = { output: () => app!.output() } as Exercised;
  beforeAll(async () => {
    app = await startApp(env, pretty);
    Object.assign(exercised, await exercise(app));
  });
  afterAll(() => app?.close());
  return exercised;
}

/** The captured output's lines, each parsed as the JSON object the production logger writes. */
function jsonLines<Entry>(output: string): Entry[] {
  return output.trim().split('\n').map((line) => JSON.parse(line) as Entry);
}

const EXPECTED_REQUESTS = [
  { method: 'POST', path: '/api/subscribe', status: 201 },
  { method: 'POST', path: '/api/subscribe', status: 400 },
  { method: 'POST', path: '/api/subscribe', status: 303 },
  { method: 'GET', path: '/unsubscribe', status: 200 },
  { method: 'POST', path: '/api/subscribe', status: 503 },
];

function expectNothingSecret(output: string, token: string) {
  for (const address of ADDRESSES) expect(output.toLowerCase()).not.toContain(address.toLowerCase());
  expect(output).not.toMatch(ANY_ADDRESS);
  expect(output).not.toContain(token);
  expect(output).not.toContain(token.slice(0, 16));
  expect(output).not.toContain(SECRET);
}

describe('production: JSON lines', () => {
  const run = exercisedApp('production', false);

  it('every line is a JSON object with a level, a time and a message', async () => {
    expect(run.statuses).toEqual(EXPECTED_REQUESTS.map((r) => r.status));
    await vi.waitFor(() => expect(run.output().split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(EXPECTED_REQUESTS.length));
    for (const entry of jsonLines<Record<string, unknown>>(run.output())) {
      expect(entry).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
    }
  });

  it('one line per request with method, path, status and duration', async () => {
    await vi.waitFor(() => expect(run.output()).toContain('"status":503'));
    const requests = jsonLines<Record<string, unknown>>(run.output()).filter((entry) => 'method' in entry && 'status' in entry);
    expect(requests.map(({ method, path, status }) => ({ method, path, status }))).toEqual(EXPECTED_REQUESTS);
    for (const entry of requests) {
      expect(entry.ms).toEqual(expect.any(Number));
      expect(entry.ms as number).toBeGreaterThanOrEqual(0);
      expect(entry.msg).toMatch(new RegExp(`^${entry.method} ${entry.path} ${entry.status} \\d+\\.\\dms$`));
    }
  });

  it('the database failure is logged with its error (type, message, stack), not an empty object', async () => {
    await vi.waitFor(() => expect(run.output()).toContain('signup could not be stored'));
    const failure = jsonLines<{ msg: string; level: number; err?: { type?: string; message?: string; stack?: string } }>(run.output()).find((entry) => entry.msg === 'signup could not be stored');
    expect(failure?.level).toBe(50);
    expect(failure?.err?.message).toEqual(expect.any(String));
    expect(failure?.err?.message?.length).toBeGreaterThan(0);
    expect(failure?.err?.stack).toMatch(/\n\s+at /);
  });

  it('no e-mail address, unsubscribe token or secret anywhere in the output', async () => {
    await vi.waitFor(() => expect(run.output()).toContain('"status":503'));
    expectNothingSecret(run.output(), run.token);
  });
});

describe('development: readable lines', () => {
  const run = exercisedApp('development', true);

  it('one short line per request: time, level, method, path, status, duration', async () => {
    await vi.waitFor(() => expect(run.output()).toContain('POST /api/subscribe 503'));
    const requestLines = run.output().split('\n').filter((line) => / (GET|POST) \//.test(line));
    expect(requestLines).toHaveLength(EXPECTED_REQUESTS.length);
    requestLines.forEach((line, index) => {
      const { method, path, status } = EXPECTED_REQUESTS[index]!;
      expect(line).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d (INFO|WARN|ERROR) ${method} ${path} ${status} \\d+\\.\\dms`));
    });
    expect(() => JSON.parse(requestLines[0]!)).toThrow();
  });

  it('no e-mail address, unsubscribe token or secret anywhere, the error stack included', async () => {
    await vi.waitFor(() => expect(run.output()).toContain('signup could not be stored'));
    expect(run.output()).toMatch(/ERROR signup could not be stored[\s\S]*\n\s+at /);
    expectNothingSecret(run.output(), run.token);
  });
});

describe('the logger itself', () => {
  it('redacts known secret fields and masks addresses in messages, fields and thrown errors', () => {
    let captured = '';
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        captured += chunk.toString();
        callback();
      },
    });
    const logger = createLogger({ level: 'info', pretty: false, destination });
    logger.info({ email: 'a.reader@example.com', apiKey: 're_live_secret', secret: SECRET, token: 'tok_123', nested: { to: 'b@example.com' } }, 'sent to c.reader@example.com');
    logger.error(new Error('duplicate key value (email)=(d.reader@example.com)'));
    const [first, second] = jsonLines<Record<string, unknown>>(captured);
    expect(first).toMatchObject({ email: '[redacted]', apiKey: '[redacted]', secret: '[redacted]', token: '[redacted]', nested: { to: '[redacted]' }, msg: 'sent to c***@example.com' });
    expect(second).toMatchObject({ msg: 'duplicate key value (email)=(d***@example.com)', err: { type: 'Error', message: 'duplicate key value (email)=(d***@example.com)' } });
    expect(captured).not.toMatch(ANY_ADDRESS);
    expect(captured).not.toContain('re_live_secret');
    expect(captured).not.toContain(SECRET);
  });
});
