// The web server: `start` is called by bin/server.ts (from source: `npm run dev`, the tests; built:
// dist/bin/server.js) once Node's compile cache is on.
// Start-up in three steps: parse the configuration, build the app from its dependencies (the store
// opening meanwhile), listen; then shut down cleanly on SIGTERM/SIGINT (stop accepting, finish
// in-flight requests, close the store) within a bound.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { flushCompileCache } from 'node:module';
import { setTimeout as delay } from 'node:timers/promises';
import { recaps } from '../content/index.ts';
import { startDigestScheduler, type DigestScheduler } from '../jobs/digest/scheduler.ts';
import { answerClientErrors, createApp } from '../server/app.ts';
import { createLogger, type Logger } from '../server/http/logger.ts';
import { configOrExit, readDotEnv } from '../server/startup.ts';
import { createMailer } from '../server/mail/index.ts';
import type { OutboxWorker } from '../server/mail/outbox-worker.ts';
import { CLIENT_DIST, createDevRenderer, loadBuiltRenderer } from '../server/site/load-renderer.ts';
import { openStore, StoreLockedError, storeWhenOpen, type Store } from '../server/store/index.ts';

// Docker and Kubernetes send SIGKILL 10 s after SIGTERM by default: in-flight requests get most of
// that, the store and a running digest batch the rest.
const SHUTDOWN_GRACE_MS = 10_000;
const DRAIN_MS = 7_000;
const devMode = process.argv.includes('--dev');

export async function start() {
  readDotEnv();
  const config = await configOrExit('Launched Weekly cannot start');
  const logger = createLogger({ level: config.logLevel, pretty: config.env !== 'production' });
  for (const warning of config.warnings) logger.warn(warning);

  // The store opens while the renderer loads and the server starts listening: pages need no
  // database, so a restart serves them while PGlite boots (most of its start) or the pool connects,
  // and a request that needs the store waits for the open. A store that cannot open stops the
  // process, as before it listened.
  const opening = openStore(config.store);
  opening.catch((error: unknown) => {
    if (error instanceof StoreLockedError) {
      logger.fatal(error.message);
      process.exit(1);
    }
    // An unreachable or misconfigured database is an operator's problem to fix, not a crash:
    // say which store and why, in one line (the error itself goes to the log at debug level).
    logger.debug({ err: error }, 'store open failed');
    const reason = error instanceof Error ? error.message : String(error);
    logger.fatal(`Cannot open the ${config.store.kind} store: ${reason}. Check ${config.store.kind === 'postgres' ? 'DATABASE_URL' : config.store.kind === 'supabase' ? 'SUPABASE_URL and the keys' : 'DATA_DIR'} and that the database is reachable.`);
    process.exit(1);
  });
  const store = storeWhenOpen(config.store.kind, opening);

  const dev = devMode ? await createDevRenderer() : null;
  const renderer = dev?.renderer ?? (await loadBuiltRenderer());
  const app = createApp({
    config,
    store,
    renderer,
    logger,
    assets: dev ? { kind: 'middleware', handler: dev.middleware } : { kind: 'static', dir: CLIENT_DIST },
    // A week turns public at its time (its date at 09:00 in DIGEST_TZ), decided per request.
    publishing: { recaps, clock: () => new Date(), timeZone: config.digest.timezone },
  });

  const server = createServer(app);
  server.listen(config.port, config.host);
  const listening = new Promise<void>((resolve) => server.once('listening', resolve));
  // Announced once it listens and its store is open, so the line still means "ready" (a store
  // that fails to open is reported above, and the process stops).
  Promise.all([listening, opening]).then(() => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info(
      { port, store: store.backend, mailer: config.mailer.kind, mode: dev ? 'vite-dev' : 'built' },
      `Launched Weekly on http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port} (${config.env}, ${dev ? 'Vite dev server' : 'built site'})`,
    );
    if (config.defaultsUsed.length > 0) logger.info(`Defaults in use: ${config.defaultsUsed.join('; ')}`);
    // Node writes its compile cache at a clean exit; written now too, the next start has it even
    // when this process ends by SIGKILL or a crash. What loads later is added at exit.
    flushCompileCache();
  }, () => {});
  answerClientErrors(server);
  server.on('error', (error) => {
    logger.fatal({ err: error }, `Cannot listen on ${config.host}:${config.port}: ${error.message}`);
    process.exit(1);
  });

  let scheduler: DigestScheduler | undefined;
  if (config.digest.cron !== 'off') {
    scheduler = startDigestScheduler({
      cron: config.digest.cron,
      timezone: config.digest.timezone,
      freshnessDays: config.digest.freshnessDays,
      store,
      mailer: await createMailer(config.mailer),
      recaps,
      siteUrl: config.siteUrl,
      unsubscribeSecret: config.unsubscribeSecret,
      production: config.env === 'production',
      logger,
      resume: { firstMs: config.digest.resumeFirstSeconds * 1000, maxMs: config.digest.resumeMaxSeconds * 1000 },
      operatorEmail: config.operatorEmail,
      noticeWebhook: Boolean(config.noticeWebhookUrl),
      catchUpHours: config.digest.catchUpHours,
      retentionDays: config.digest.retentionDays,
      leaseMs: config.digest.leaseSeconds * 1000,
    });
    logger.info(`Weekly digest scheduled "${config.digest.cron}" (${config.digest.timezone}); next run ${scheduler.nextRun()?.toISOString() ?? 'never'}`);
  }

  installShutdown({ server, store, logger, closeDev: dev?.close, scheduler, outbox: app.outbox });
}

interface Running {
  server: Server;
  store: Store;
  logger: Logger;
  closeDev?: () => Promise<void>;
  scheduler?: DigestScheduler;
  outbox: OutboxWorker;
}

function installShutdown({ server, store, logger, closeDev, scheduler, outbox }: Running) {
  let stopping = false;
  const inFlight = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    res.on('close', () => inFlight.delete(res));
    if (stopping && !res.headersSent) res.setHeader('Connection', 'close');
  });
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received: finishing ${inFlight.size} in-flight request(s)`);
    const forced = setTimeout(() => {
      logger.error(`Shutdown took longer than ${SHUTDOWN_GRACE_MS / 1000}s; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    forced.unref();
    // The digest is told to stop now, not after the drain: the batch in flight is answered and
    // recorded while requests finish. Should the forced exit still come first, that batch is
    // already written ahead as pending, and the next run repeats it with the same key.
    const digestStopped = scheduler?.stop().catch((error: unknown) => logger.error({ err: error }, 'Stopping the weekly digest failed'));
    // The same for the outbox: the message in flight is settled, anything claimed but unsent is
    // handed back for the next process (a forced exit leaves it to its lease instead).
    const outboxStopped = outbox.stop().catch((error: unknown) => logger.error({ err: error }, 'Stopping the outbox failed'));
    // Each keep-alive connection closes once its current response is sent, so clients reconnect
    // (to another replica) instead of sending more requests here.
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // A connection whose response went out with headers already sent turns idle rather than closing.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const drained = await Promise.race([closed.then(() => true), delay(DRAIN_MS, false)]);
    clearInterval(sweep);
    if (!drained) {
      logger.warn(`${inFlight.size} request(s) still running after ${DRAIN_MS / 1000}s: closing their connections`);
      server.closeAllConnections();
      await closed;
    }
    await closeDev?.();
    // A digest batch in flight is finished and recorded before the store goes away.
    await digestStopped;
    await outboxStopped;
    await store.close();
    logger.info('Stopped cleanly');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

