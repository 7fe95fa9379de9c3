// Starts the real app (production build, real store) on a free loopback port for a test.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerClientErrors, createApp, type AppConfig } from '../../server/app.ts';
import { createLogger, type Logger } from '../../server/http/logger.ts';
import type { OutboxWorker } from '../../server/mail/outbox-worker.ts';
import type { Publishing } from '../../server/site/public-weeks.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';

export interface TestServer {
  url: string;
  store: Store;
  dataDir: string;
  /** Where confirmation and welcome e-mails are written (one .eml each). */
  outboxDir: string;
  close(): Promise<void>;
}

export const TEST_UNSUBSCRIBE_SECRET = 'test-unsubscribe-secret-0123456789abcdef0123456789';

export async function startTestServer(
  options: { store?: Store; config?: Partial<AppConfig>; logger?: Logger; publishing?: Publishing; outbox?: OutboxWorker } = {},
): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-test-'));
  const store = options.store ?? (await openPGliteStore(join(dataDir, 'data')));
  const renderer = await loadBuiltRenderer();
  const logger = options.logger ?? createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', pretty: true });
  // Listen first: canonical links and redirects use SITE_URL, which in tests is the server itself.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const config = {
    env: 'test',
    siteUrl: url,
    trustProxy: 0,
    rateLimitPerMinute: 1_000,
    unsubscribeSecret: TEST_UNSUBSCRIBE_SECRET,
    // Confirmation and welcome e-mails land in this test's own outbox (outboxDir).
    mailer: { kind: 'outbox', dir: join(dataDir, 'outbox'), from: 'Launched Weekly <digest@localhost>' },
    signupConfirmation: 'single',
    welcomeEmail: false,
    ...options.config,
  } as AppConfig;
  answerClientErrors(server);
  const app = createApp({ config, store, renderer, logger, assets: { kind: 'static', dir: CLIENT_DIST }, publishing: options.publishing, outbox: options.outbox });
  server.on('request', app);
  await app.referralMilestones;
  return {
    url,
    store,
    dataDir,
    outboxDir: join(dataDir, 'outbox'),
    async close() {
      try {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await app.outbox.stop();
        if (!options.store) await store.close();
      } finally {
        // Removed even when a step above fails (a store a test already closed), so no run leaves
        // its embedded database behind in the temporary directory.
        await rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
      }
    },
  };
}

/** The app on a store of its own over the PostgreSQL database at `databaseUrl`; close() stops the app, then closes that store. */
export async function startTestServerOnPostgres(databaseUrl: string, config: Partial<AppConfig>): Promise<TestServer> {
  const store = await openPostgresStore(databaseUrl);
  const server = await startTestServer({ store, config });
  return {
    ...server,
    async close() {
      await server.close();
      await store.close();
    },
  };
}

/** Posts a form as a page without JavaScript does (URL-encoded), and keeps any redirect as the answer. */
export const postForm = (url: string | URL, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' });
