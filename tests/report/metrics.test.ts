// GET /metrics: the figures where operators look. A real Prometheus (Debian's `prometheus`, which
// .ci/run installs) scrapes the test server with the bearer token, and a query for subscribers by
// state returns what the store holds; a scrape without the token is refused with 401, and the
// endpoint does not exist without METRICS_TOKEN. A slow database answers 503, not a hang.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../server/config.ts';
import { createLogger } from '../../server/http/logger.ts';
import { createFigures } from '../../server/metrics/figures.ts';
import { metricsRouter } from '../../server/metrics/routes/metrics.ts';
import { SUBSCRIBER_STATUSES, type Store } from '../../server/store/types.ts';
import { freePort } from '../../scripts/free-port.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { storeBackends } from '../support/store-backends.ts';
import { addSignup } from '../support/store-ops.ts';

const TOKEN = 'metrics-token-0123456789abcdef';
const PROMETHEUS = '/usr/bin/prometheus';
const prometheusInstalled = spawnSync(PROMETHEUS, ['--version']).status === 0;
if (!prometheusInstalled) console.warn(`tests/report/metrics.test.ts: ${PROMETHEUS} is missing (apt-get install prometheus; .ci/run installs it): the scrape by a real Prometheus is skipped.`);

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Subscribers in every state: active from two pages, one who left, one bounced, two awaiting confirmation. */
async function fillList(store: Store): Promise<void> {
  for (const email of ['a1@example.com', 'a2@example.com', 'a3@example.com']) await addSignup(store, email, '/');
  await addSignup(store, 'archive@example.com', '/archive');
  await addSignup(store, 'left@example.com', '/');
  await addSignup(store, 'bounced@example.com', '/');
  for (const email of ['pending1@example.com', 'pending2@example.com']) {
    await store.signUp({ email, source: '/about', mode: 'double', networkHash: null, addressHashes: [] });
  }
  const ids = async (email: string) => (await store.findSubscriberByEmail(email))!.id;
  await store.removeSubscriber(await ids('left@example.com'), 'unsubscribed');
  await store.removeSubscriber(await ids('bounced@example.com'), 'bounced');
}

/** The store's own count of each state: what every scrape must agree with. */
async function storeStates(store: Store): Promise<Record<string, number>> {
  const counts = await store.countSubscribers();
  return Object.fromEntries(SUBSCRIBER_STATUSES.map((state) => [state, state === 'active' ? counts.active : counts.byStatus[state]]));
}

describe('GET /metrics with METRICS_TOKEN set', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { metricsToken: TOKEN } });
    await fillList(server.store);
  });
  afterAll(() => server?.close());

  it('refuses a scrape without the token or with another one, naming the header', async () => {
    for (const headers of [{}, bearer('not-the-token-0123456789'), { Authorization: TOKEN }, bearer(`${TOKEN}x`)]) {
      const answer = await fetch(`${server.url}/metrics`, { headers });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await answer.json()).toMatchObject({ error: 'unauthorized', message: expect.stringContaining('Authorization: Bearer') });
    }
  });

  it('answers the figures in Prometheus text format to the token, counting signups as they are answered', async () => {
    await fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: server.url }, body: JSON.stringify({ email: 'new@example.com' }) });
    await fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: server.url }, body: JSON.stringify({ email: 'not an address' }) });
    const answer = await fetch(`${server.url}/metrics`, { headers: bearer(TOKEN) });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await answer.text();
    const states = await storeStates(server.store);
    expect(states).toEqual({ pending: 2, active: 5, unsubscribed: 1, bounced: 1, complained: 0 });
    for (const [state, count] of Object.entries(states)) expect(text).toContain(`launched_subscribers{state="${state}"} ${count}\n`);
    // The home page's three, and the API signup above (which names no page, so counts as the home page's).
    expect(text).toContain('launched_signups{source="/",state="active"} 4\n');
    expect(text).toContain('launched_signups{source="/archive",state="active"} 1\n');
    expect(text).toContain('launched_signups{source="/about",state="pending"} 2\n');
    expect(text).toContain('launched_signup_requests_total{outcome="subscribed"} 1\n');
    expect(text).toContain('launched_signup_requests_total{outcome="invalid"} 1\n');
    expect(text).toContain('launched_outbox_held 0\n');
    expect(text).toContain('launched_digest_run_running 0\n');
    expect(text).toContain('launched_link_clicks 0\n');
  });

  describe.skipIf(!prometheusInstalled)('scraped by a real Prometheus', () => {
    let dir: string;
    let prometheus: ChildProcess | undefined;
    let api: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'prometheus-'));
      const target = new URL(server.url).host;
      // Two jobs on the same target: one with the token, one without (which must see 401).
      await writeFile(
        join(dir, 'prometheus.yml'),
        [
          'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
          'scrape_configs:',
          '  - job_name: launched',
          `    authorization: { type: Bearer, credentials: "${TOKEN}" }`,
          `    static_configs: [{ targets: ["${target}"] }]`,
          '  - job_name: launched-without-token',
          `    static_configs: [{ targets: ["${target}"] }]`,
          '',
        ].join('\n'),
      );
      const port = await freePort();
      api = `http://127.0.0.1:${port}/api/v1`;
      prometheus = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    });
    afterAll(async () => {
      if (prometheus && prometheus.exitCode === null) {
        const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
        prometheus.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    });

    async function query(expression: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
      const answer = await fetch(`${api}/query?query=${encodeURIComponent(expression)}`).catch(() => null);
      if (!answer?.ok) return [];
      return ((await answer.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
    }

    it('stores what the store holds for subscribers by state, and its scrape without the token fails with 401', async () => {
      const started = Date.now();
      let result: Awaited<ReturnType<typeof query>> = [];
      while (result.length < SUBSCRIBER_STATUSES.length && Date.now() - started < 10_000) {
        await sleep(250);
        result = await query('launched_subscribers{job="launched"}');
      }
      const scraped = Object.fromEntries(result.map((series) => [series.metric.state!, Number(series.value[1])]));
      expect(scraped).toEqual(await storeStates(server.store));
      expect((await query('up{job="launched"}')).map((series) => series.value[1])).toEqual(['1']);

      type Target = { labels: { job: string }; health: string; lastError: string };
      const withoutToken = async () => {
        const targets = (await (await fetch(`${api}/targets`)).json()) as { data: { activeTargets: Target[] } };
        return targets.data.activeTargets.find((t) => t.labels.job === 'launched-without-token');
      };
      // Scraped on its own schedule: wait (within the same bound) until it has been tried once.
      let refused = await withoutToken();
      while (refused?.health === 'unknown' && Date.now() - started < 10_000) {
        await sleep(250);
        refused = await withoutToken();
      }
      expect(refused).toMatchObject({ health: 'down', lastError: expect.stringContaining('401') });
    });
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  it('does not exist: 404, with or without a token', async () => {
    const server = await startTestServer();
    try {
      for (const headers of [{}, bearer(TOKEN)]) {
        const answer = await fetch(`${server.url}/metrics`, { headers });
        expect(answer.status).toBe(404);
        expect(await answer.text()).not.toContain('launched_subscribers');
      }
    } finally {
      await server.close();
    }
  });
});

describe('GET /metrics with a slow database', () => {
  it('answers 503 within its time bound instead of waiting for the store', async () => {
    const stalled = { metricsSnapshot: () => new Promise<never>(() => {}) };
    const app = express().use(metricsRouter({ token: TOKEN, store: stalled, figures: createFigures(), logger: createLogger({ level: 'silent', pretty: false }), storeTimeoutMs: 200 }));
    const listening = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    try {
      const { port } = listening.address() as { port: number };
      const started = Date.now();
      const answer = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: bearer(TOKEN) });
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ error: 'unavailable', message: expect.stringMatching(/slow/) });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await new Promise((resolve) => listening.close(resolve));
    }
  });
});

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`The metrics snapshot on ${backend.name}`, () => {
    it('holds the store’s own counts, the outbox’s open mail and no run before the first', async () => {
      const opened = await backend.open();
      try {
        await fillList(opened.store);
        const snapshot = await opened.store.metricsSnapshot();
        const states = await storeStates(opened.store);
        expect(SUBSCRIBER_STATUSES.map((state) => snapshot.subscribers[state] ?? 0)).toEqual(SUBSCRIBER_STATUSES.map((state) => states[state]));
        expect(snapshot.signups).toContainEqual({ source: '/about', state: 'pending', count: 2 });
        // The two confirmations the double-mode signups promised wait in the outbox (no worker runs here).
        expect(snapshot.outbox).toEqual({ queued: 2, retrying: 0, held: 0 });
        expect(snapshot.run).toBeNull();
        expect(snapshot.clicks).toBe(0);
      } finally {
        await opened.cleanup();
      }
    });
  });
}

describe('METRICS_TOKEN in the environment', () => {
  const parse = (env: Record<string, string>) => parseConfig(env, async () => 'metrics-config-secret-0123456789abcdef');

  it('is off when unset, taken when long enough, and a short one stops the start naming the variable', async () => {
    expect((await parse({})).metricsToken).toBeUndefined();
    expect((await parse({ METRICS_TOKEN: TOKEN })).metricsToken).toBe(TOKEN);
    const refused = await parse({ METRICS_TOKEN: 'short' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([expect.stringMatching(/^METRICS_TOKEN: must be at least 16 random characters/)]);
  });
});
