// The database goes away under signup load and comes back, while the app keeps running: signups
// answer 503 "Please try again later.", pages still render, /readyz says 503; once PostgreSQL is
// back the pool reconnects by itself and signups succeed again. No signup that was answered 201
// may be missing afterwards. This file runs its own PostgreSQL: the shared test server must stay up.
import { Agent, request } from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgClient } from '../../server/store/postgres.ts';
import { classifyError, sqlStore } from '../../server/store/sql-store.ts';
import { StoreUnavailableError, type Store } from '../../server/store/types.ts';
import { hasPostgresServer, startOwnPostgres, type OwnPostgres } from '../../scripts/own-postgres.ts';
import { postForm, startTestServer, startTestServerOnPostgres, type TestServer } from '../support/server.ts';
import { addSignup, allSubscriberRecords } from '../support/store-ops.ts';

type Phase = 'before' | 'stopping' | 'down' | 'starting' | 'after';

interface Signup {
  email: string;
  phase: Phase;
  status: number;
  body: string;
}

function post(agent: Agent, url: URL, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (error) => resolve({ status: 0, body: String(error) }));
    });
    // A failed connection is recorded as status 0: the test then fails on it, with the reason.
    req.on('error', (error) => resolve({ status: 0, body: String(error) }));
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** While the database is down: pages, health and the no-JavaScript form still answer; the store's own calls and /readyz say it is unavailable. */
async function expectServingWithoutTheStore(server: TestServer, store: Store) {
  const get = (path: string) => fetch(new URL(path, server.url));
  for (const path of ['/', '/archive', '/about', '/weekly-recap-july-14', '/?signup=subscribed', '/no-such-page']) {
    const page = await get(path);
    expect(page.status, path).toBe(path === '/no-such-page' ? 404 : 200);
    expect(await page.text(), path).toContain('Launched Weekly');
  }
  const notReady = await get('/readyz');
  expect(notReady.status).toBe(503);
  expect(await notReady.json()).toMatchObject({ status: 'unavailable', store: 'postgres' });
  expect((await get('/healthz')).status).toBe(200);
  await expect(addSignup(store, 'direct.outage@example.com', '/')).rejects.toBeInstanceOf(StoreUnavailableError);
  await expect(store.checkReady()).rejects.toBeInstanceOf(StoreUnavailableError);
  const form = await postForm(new URL('/api/subscribe', server.url), 'email=form.outage%40example.com&source=%2Fabout');
  expect(form.status).toBe(303);
  expect(form.headers.get('location')).toBe('/about?signup=unavailable#email-signup');
}

describe.skipIf(!hasPostgresServer)('PostgreSQL stops under signup load, then comes back', () => {
  let postgres: OwnPostgres;
  let server: TestServer;
  beforeAll(async () => {
    postgres = await startOwnPostgres();
    server = await startTestServerOnPostgres(postgres.url, { rateLimitPerMinute: 1e9 });
  });
  afterAll(async () => {
    await server?.close();
    await postgres?.destroy();
  });

  it('answers 503 while it is down, keeps serving pages, recovers without a restart, and loses no accepted signup', async () => {
    const signups: Signup[] = [];
    let phase: Phase = 'before';
    let running = true;
    let sequence = 0;
    const agent = new Agent({ keepAlive: true, maxSockets: 20 });
    const url = new URL('/api/subscribe', server.url);
    const workers = Array.from({ length: 20 }, async () => {
      while (running) {
        const email = `outage.${sequence++}@example.com`;
        const sentIn = phase;
        const outcome = await post(agent, url, JSON.stringify({ email }));
        signups.push({ email, phase: sentIn, ...outcome });
        // While the database is down the answers come back at once; a breath keeps the loop
        // from starving the server it is testing.
        if (outcome.status !== 201) await sleep(2);
      }
    });
    const count = (status: number, phases: Phase[]) => signups.filter((s) => s.status === status && phases.includes(s.phase)).length;
    const get = (path: string) => fetch(new URL(path, server.url));

    try {
      await waitFor('300 signups before the outage', () => count(201, ['before']) >= 300);

      phase = 'stopping';
      const stoppedAt = performance.now();
      await postgres.stop();
      phase = 'down';
      console.log(`[store-outage] pg_ctl stop -m fast took ${(performance.now() - stoppedAt).toFixed(0)} ms`);

      await waitFor('503 answers while the database is down', () => count(503, ['down']) >= 50);
      const unavailable = signups.find((s) => s.phase === 'down' && s.status === 503)!;
      expect(JSON.parse(unavailable.body)).toEqual({ error: 'unavailable', message: 'Please try again later.' });
      expect(count(201, ['down'])).toBe(0);

      await expectServingWithoutTheStore(server, server.store);

      phase = 'starting';
      const startedAt = performance.now();
      await postgres.start();
      phase = 'after';
      await waitFor('signups to succeed again', () => count(201, ['after']) >= 300);
      const recoveredMs = performance.now() - startedAt;
      await waitFor('/readyz to answer 200', async () => (await get('/readyz')).status === 200);
      console.log(`[store-outage] pg_ctl start and 300 signups accepted again within ${recoveredMs.toFixed(0)} ms, no app restart`);
    } finally {
      running = false;
      await Promise.all(workers);
      agent.destroy();
    }

    const byStatus: Record<string, Record<string, number>> = {};
    for (const signup of signups) {
      byStatus[signup.phase] ??= {};
      byStatus[signup.phase]![signup.status] = (byStatus[signup.phase]![signup.status] ?? 0) + 1;
    }
    const stored = new Set((await allSubscriberRecords(server.store)).map((record) => record.email));
    const accepted = signups.filter((s) => s.status === 201);
    const refused = signups.filter((s) => s.status === 503);
    const acceptedMissing = accepted.filter((s) => !stored.has(s.email));
    const refusedButStored = refused.filter((s) => stored.has(s.email));
    console.log(
      `[store-outage] ${signups.length} signups, statuses by phase ${JSON.stringify(byStatus)}; ` +
        `${accepted.length} answered 201, all stored: ${acceptedMissing.length === 0}; ` +
        `${refused.length} answered 503, of which ${refused.length - refusedButStored.length} absent and ${refusedButStored.length} stored (in flight when the database stopped)`,
    );

    expect(signups.filter((s) => s.status !== 201 && s.status !== 503).map((s) => `${s.status} ${s.body}`)).toEqual([]);
    expect(acceptedMissing.map((s) => s.email)).toEqual([]);
    expect(count(201, ['after'])).toBeGreaterThanOrEqual(300);
    // Only a request in flight as the database stopped can have been written and still answered 503.
    expect(refusedButStored.filter((s) => s.phase !== 'before' && s.phase !== 'stopping')).toEqual([]);
    expect(stored.size).toBe(accepted.length + refusedButStored.length);
  }, 60_000);
});

describe('a database that cannot be reached in other ways', () => {
  it('a host name whose every address refuses (Node reports an AggregateError with no message) is unavailable', async () => {
    // localhost resolving to ::1 and 127.0.0.1, as on most machines; port 1 refuses on both.
    const refused = await new Promise<Error>((resolve) => {
      const socket = connect({
        host: 'localhost',
        port: 1,
        lookup: (_host, options, callback) => {
          if (options.all) callback(null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]);
          else callback(null, '127.0.0.1', 4);
        },
      });
      socket.on('error', resolve);
    });
    expect(refused.message).toBe('');
    expect(classifyError(refused)).toBeInstanceOf(StoreUnavailableError);
  });

  it('a database that accepts connections but never answers: the store says unavailable and signups answer 503 within the connect timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/postgres`;
    // One connection: the first query waits for the server's greeting, the others for the pool.
    const hung = sqlStore('postgres', createPgClient(url, { max: 1 }));
    const server = await startTestServer({ store: hung, config: { rateLimitPerMinute: 1e9 } });
    try {
      const started = performance.now();
      const [first, second, viaApp] = await Promise.allSettled([
        addSignup(hung, 'hung.1@example.com', '/'),
        addSignup(hung, 'hung.2@example.com', '/'),
        fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'hung.3@example.com' }) }),
      ]);
      const seconds = (performance.now() - started) / 1000;
      console.log(`[store-outage] silent database: answers after ${seconds.toFixed(1)} s`);
      expect(first.status === 'rejected' && first.reason).toBeInstanceOf(StoreUnavailableError);
      expect(second.status === 'rejected' && second.reason).toBeInstanceOf(StoreUnavailableError);
      expect(viaApp.status === 'fulfilled' && viaApp.value.status).toBe(503);
      expect(viaApp.status === 'fulfilled' && (await viaApp.value.json())).toEqual({ error: 'unavailable', message: 'Please try again later.' });
      expect(seconds).toBeLessThan(15);
    } finally {
      await server.close();
      for (const socket of sockets) socket.destroy();
      await hung.close().catch(() => {});
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 30_000);
});
