// The production app, as `npm start` serves it, on a fresh embedded database. Run as a child
// process so the load generator does not share its event loop; the static reference is a process
// of its own (static-server.ts).
import express from 'express';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../../server/app.ts';
import { createLogger } from '../../server/http/logger.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';

const dir = await mkdtemp(join(tmpdir(), 'launched-weekly-bench-'));
const store = await openPGliteStore(join(dir, 'data'));
// Production logs one JSON line per request; the bench pays that cost too, into a sink.
const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
const logger = createLogger({ level: 'info', pretty: false, destination: sink });
const renderer = await loadBuiltRenderer();

const outer = express();
outer.disable('x-powered-by');
let port = 0;
const server = outer.listen(0, '127.0.0.1', async () => {
  port = (server.address() as AddressInfo).port;
  const siteUrl = `http://127.0.0.1:${port}`;
  outer.use(
    createApp({
      config: { env: 'production', siteUrl, trustProxy: 0, rateLimitPerMinute: 10, unsubscribeSecret: 'bench-secret-bench-secret-bench-secret-00' } as Parameters<typeof createApp>[0]['config'],
      store,
      renderer,
      logger,
      assets: { kind: 'static', dir: CLIENT_DIST },
    }),
  );
  const page = process.argv[2] ?? '/weekly-recap-july-14';
  // `--cold`: nothing requested before the caller's first request (Lighthouse's cold runs).
  const html = process.argv[3] === '--cold' ? '' : await (await fetch(siteUrl + page)).text();
  process.stdout.write(`${JSON.stringify({ port, page, bytes: Buffer.byteLength(html) })}\n`);
});

process.on('SIGTERM', () => {
  server.close();
  // The embedded database goes with the process: a run leaves nothing in /tmp.
  void store
    .close()
    .finally(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }))
    .then(() => process.exit(0));
});
