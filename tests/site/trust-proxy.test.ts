// Behind a proxy with TRUST_PROXY=0 every reader shares one signup limit, and
// nothing said so. The first request carrying X-Forwarded-For or Forwarded logs ONE warning naming
// TRUST_PROXY and what it breaks, and the operator's report (its own process, reading the store)
// shows a failing set-up check; a server with TRUST_PROXY set clears it. On PGlite (the report
// CLI as its own process on the data directory) and PostgreSQL (the report gathered in-process).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { gatherReport } from '../../jobs/report/gather.ts';
import { headlineFigures, renderReportHtml } from '../../jobs/report/render.tsx';
import { createLogger } from '../../server/http/logger.ts';
import { TRUST_PROXY_WARNING } from '../../server/http/proxy-check.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { npmRun } from '../support/cli.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET } from '../support/server.ts';
import { appStoreKinds } from '../support/store-backends.ts';


/** A logger whose JSON lines the test reads. */
function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level: 'info', pretty: false, destination }), lines };
}

/** Requests through a proxy (and one without), as a reverse proxy would forward them. */
async function browse(url: string) {
  await fetch(`${url}/`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
  await fetch(`${url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.8' }, body: JSON.stringify({ email: 'proxied@example.com' }) });
  await fetch(`${url}/about`, { headers: { forwarded: 'for=198.51.100.9;proto=https' } });
  await fetch(`${url}/archive`);
}

async function noticesSettled(store: Store, count: number) {
  for (let i = 0; i < 50 && (await store.serverNotices()).length !== count; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return store.serverNotices();
}

const reportOptions = (store: Store) => ({ store, recaps, now: new Date(), siteUrl: 'https://launchedweekly.test', production: false, digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 } });

const reportCli = (dataDir: string, out: string) => npmRun('report', ['--out', out], { DATA_DIR: dataDir, UNSUBSCRIBE_SECRET: TEST_UNSUBSCRIBE_SECRET, LOG_LEVEL: 'silent' });

for (const kind of appStoreKinds) {
  describe.skipIf(!kind.available)(`TRUST_PROXY=0 behind a proxy on ${kind.name}`, () => {
    let dataDir: string;
    let opened: Awaited<ReturnType<(typeof kind)['open']>>;
    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'lw-trust-proxy-'));
      opened = await kind.open();
    });
    afterAll(async () => {
      await opened?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    /** The store for one server's life: PostgreSQL's, or the embedded one in dataDir (closed after). */
    async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
      const store = opened.store ?? (await openPGliteStore(dataDir));
      try {
        return await work(store);
      } finally {
        if (!opened.store) await store.close();
      }
    }

    it('a stray X-Forwarded-For among direct requests warns of nothing and leaves the set-up check green', async () => {
      await withStore(async (store) => {
        const { logger, lines } = capturingLogger();
        const server = await startTestServer({ store, logger, config: { trustProxy: 0 } });
        try {
          for (const path of ['/', '/about', '/archive']) await fetch(`${server.url}${path}`);
          await fetch(`${server.url}/`, { headers: { 'x-forwarded-for': '6.6.6.6' } });
          for (const path of ['/', '/about', '/archive', '/', '/about', '/archive']) await fetch(`${server.url}${path}`);
        } finally {
          await server.close();
        }
        expect(lines.filter((line) => line.includes('TRUST_PROXY'))).toEqual([]);
        expect(await store.serverNotices()).toEqual([]);
        const data = await gatherReport(reportOptions(store));
        expect(data.setupChecks).toMatchObject([{ id: 'trust-proxy', status: 'pass' }]);
      });
    });

    it('logs one warning naming TRUST_PROXY, and the report’s set-up check fails until a server with TRUST_PROXY set sees a proxied request', async () => {
      await withStore(async (store) => {
        const { logger, lines } = capturingLogger();
        const server = await startTestServer({ store, logger, config: { trustProxy: 0 } });
        try {
          await browse(server.url);
          await browse(server.url);
        } finally {
          await server.close();
        }
        const warnings = lines.filter((line) => line.includes('TRUST_PROXY'));
        expect(warnings).toHaveLength(1);
        expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, variable: 'TRUST_PROXY', msg: TRUST_PROXY_WARNING });
        expect(TRUST_PROXY_WARNING).toContain('all readers share one signup limit');
        // How to tell a real proxy, and what the setting costs when there is none.
        expect(TRUST_PROXY_WARNING).toContain('To tell whether a proxy is really there');
        expect(TRUST_PROXY_WARNING).toContain('with TRUST_PROXY set and no proxy in front, any client chooses its own address by sending the header, and so passes the per-address signup limits');
        expect(await noticesSettled(store, 1)).toMatchObject([{ name: 'trust-proxy', detail: TRUST_PROXY_WARNING }]);
      });

      if (opened.store) {
        const data = await gatherReport(reportOptions(opened.store));
        expect(data.setupChecks).toMatchObject([{ id: 'trust-proxy', status: 'fail' }]);
        expect(headlineFigures(data)).toContain('Set-up checks: TRUST_PROXY failed');
        expect(await renderReportHtml(data)).toContain('<li class="check-fail"><b>TRUST_PROXY</b> (fail): TRUST_PROXY is 0, but most requests arrive');
      } else {
        // The report as the operator runs it: its own process, reading the data directory.
        const out = join(dataDir, 'report.html');
        const report = await reportCli(dataDir, out);
        expect(report.code, report.stderr).toBe(0);
        expect(report.stdout).toContain('Set-up checks: TRUST_PROXY failed');
        expect(report.stdout).toContain('all readers share one signup limit');
        expect(await readFile(out, 'utf8')).toContain('<li class="check-fail"><b>TRUST_PROXY</b> (fail)');
      }

      // Fixed: the next server, with TRUST_PROXY=1, clears the notice and warns of nothing.
      await withStore(async (store) => {
        const { logger, lines } = capturingLogger();
        const server = await startTestServer({ store, logger, config: { trustProxy: 1 } });
        try {
          await browse(server.url);
        } finally {
          await server.close();
        }
        expect(lines.filter((line) => line.includes('TRUST_PROXY'))).toEqual([]);
        expect(await noticesSettled(store, 0)).toEqual([]);
        const data = await gatherReport(reportOptions(store));
        expect(data.setupChecks).toMatchObject([{ id: 'trust-proxy', status: 'pass' }]);
        expect(headlineFigures(data)).toContain('Set-up checks: 1 passed');
      });
    });
  });
}
