// The HTTP application, built from its dependencies: nothing here reads the environment or opens
// a connection, so tests build it with a real store and renderer of their choosing.
import compression from 'compression';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import express, { type Express, type RequestHandler } from 'express';
import { recaps } from '../content/index.ts';
import { pluralWord } from '../content/text.ts';
import { refuseCrossSite } from './abuse/cross-site.ts';
import { SIGNUPS_PER_ADDRESS_PER_DAY } from './abuse/signup-screen.ts';
import { DEFAULT_MAIL_FROM, type Config } from './config.ts';
import { errorHandler, sendError } from './http/errors.ts';
import helmet from 'helmet';
import { requestLogger, type Logger } from './http/logger.ts';
import type { Renderer } from './site/page-server.ts';
import { proxyCheck } from './http/proxy-check.ts';
import { pathsOf, publicSite } from './site/public-site.ts';
import type { Publishing } from './site/public-weeks.ts';
import { goLinksRouter } from './site/routes/go.ts';
import { previewRouter } from './site/routes/preview.ts';
import { resendWebhookRouter } from './mail/routes/resend-webhook.ts';
import { subscribeRoute } from './subscribers/routes/subscribe.ts';
import { unsubscribeRouter } from './subscribers/routes/unsubscribe.ts';
import { MigrationsPendingError, type Store } from './store/types.ts';
import { createMailer, type Mailer } from './mail/index.ts';
import { confirmRouter } from './subscribers/routes/confirm.ts';
import { subscriptionRouter } from './subscribers/routes/subscription.ts';
import { subscriptionLinkRouter } from './subscribers/routes/subscription-link.ts';
import { shareLinkRouter } from './subscribers/routes/share-link.ts';
import { storedMailboxKey, subscriberKeys } from './subscribers/subscriber-keys.ts';
import { subscriberMail } from './mail/subscriber-mail.ts';
import { isPublic } from '../content/publication.ts';
import { signupService } from './subscribers/signup.ts';
import { createOutboxWorker, OUTBOX_DELIVERY_POLICY, type OutboxWorker } from './mail/outbox-worker.ts';
import { byDateNewestFirst } from '../content/dates.ts';
import { createFigures } from './metrics/figures.ts';
import { metricsRouter } from './metrics/routes/metrics.ts';
import { createNoticeWebhookWorker } from './notices/webhook-worker.ts';

export type AppConfig = Pick<
  Config,
  'env' | 'siteUrl' | 'trustProxy' | 'rateLimitPerMinute' | 'unsubscribeSecret' | 'unsubscribeSecretPrevious' | 'resendWebhookSecret'
> &
  Partial<Pick<Config, 'mailer' | 'signupConfirmation' | 'welcomeEmail' | 'outbox' | 'operatorEmail' | 'metricsToken' | 'noticeWebhookUrl' | 'referralMilestones'>> & {
    /** Not an environment setting: 3. Load tests that repeat addresses on purpose raise it. */
    signupsPerAddressPerDay?: number;
  };

export interface AppDeps {
  config: AppConfig;
  store: Store;
  renderer: Renderer;
  logger: Logger;
  /** Built client files (dist/client), or Vite's dev middleware. */
  assets: { kind: 'static'; dir: string } | { kind: 'middleware'; handler: RequestHandler };
  /** For confirmation and welcome e-mails; made from config.mailer on first use when not given. */
  mailer?: Mailer;
  /** The outbox worker to wake after a signup; made (and started) from the store and mailer when not given. */
  outbox?: OutboxWorker;
  /**
   * Which weeks exist and when each becomes public (server/site/public-weeks.ts): the content's
   * weeks, the real clock and UTC when not given; bin/start-server.ts passes DIGEST_TZ.
   */
  publishing?: Publishing;
}

/** Every page path the site has once every week is public: home, archive, about and one per recap. */
export function sitePaths(): ReadonlySet<string> {
  return pathsOf(recaps);
}

const ONE_YEAR_SECONDS = 31_536_000;

/** The security headers of every answer (helmet); a page may set its own Referrer-Policy after it. */
function securityHeaders(config: AppConfig, cspEnabled: boolean): RequestHandler {
  return helmet({
    // Vite's development client injects inline scripts; the built site needs none, so only
    // the site's own script files may run.
    contentSecurityPolicy:
      cspEnabled && {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          // sonner inserts its stylesheet at run time; React writes style attributes.
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          fontSrc: ["'self'"],
          connectSrc: ["'self'"],
          objectSrc: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          ...(config.env === 'production' && config.siteUrl.startsWith('https:') ? { upgradeInsecureRequests: [] } : {}),
        },
      },
    strictTransportSecurity: config.env === 'production' ? { maxAge: ONE_YEAR_SECONDS, includeSubDomains: true } : false,
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    // frame-ancestors 'none' for browsers that read CSP, the same in the older header.
    xFrameOptions: { action: 'deny' },
    crossOriginEmbedderPolicy: false,
  });
}

/** GET /readyz: the store is reachable and migrated; when it is behind, which migrations are missing. */
function readiness(store: AppDeps['store'], logger: Logger): RequestHandler {
  return async (_req, res) => {
    try {
      await store.checkReady();
      res.json({ status: 'ready', store: store.backend });
    } catch (error) {
      logger.warn({ err: error }, 'readiness check failed');
      if (error instanceof MigrationsPendingError) {
        // Reachable but behind: say which files, so the operator knows what to apply.
        res.status(503).json({
          status: 'unavailable',
          store: store.backend,
          message: `The database is reachable but not migrated: ${error.pending.join(', ')} ${pluralWord(error.pending.length, 'is', 'are')} missing. Apply supabase/migrations with npm run db:migrate.`,
          missingMigrations: error.pending,
        });
        return;
      }
      res.status(503).json({ status: 'unavailable', store: store.backend, message: 'The database cannot be reached.' });
    }
  };
}

/** The built client's files (hashed assets cached for a year), or Vite's middleware in development. */
function serveAssets(app: Express, assets: AppDeps['assets']) {
  if (assets.kind === 'static') {
    app.use(
      '/assets',
      express.static(`${assets.dir}/assets`, {
        immutable: true,
        maxAge: ONE_YEAR_SECONDS * 1000,
        index: false,
        fallthrough: false,
      }),
    );
    // The built template is not a page: '/' is.
    app.get('/index.html', (_req, res) => res.redirect(301, '/'));
    app.use(express.static(assets.dir, { index: false, maxAge: '1h' }));
  } else {
    app.use(assets.handler);
  }
}

// A trailing slash is the same page; send readers and crawlers to the one canonical address.
const trailingSlashRedirect: RequestHandler = (req, res, next) => {
  if ((req.method === 'GET' || req.method === 'HEAD') && req.path.length > 1 && req.path.endsWith('/')) {
    const query = req.originalUrl.slice(req.path.length);
    // Leading slashes and backslashes collapse to one: `//evil.example/` (or `/\evil.example/`,
    // which browsers read the same way) must not become a redirect to another site.
    res.redirect(301, `/${req.path.replace(/^[/\\]+/, '').replace(/\/+$/, '')}${query}`);
    return;
  }
  next();
};

export function createApp(deps: AppDeps) {
  const { config, store, renderer, logger, assets } = deps;
  const publishing = deps.publishing ?? { recaps, clock: () => new Date(), timeZone: 'UTC' };
  const app = express();
  const onRenderError = (error: unknown) => logger.error({ err: error }, 'page render failed');
  const site = publicSite({ publishing, renderer, siteUrl: config.siteUrl, onRenderError });
  const previousSecrets = config.unsubscribeSecretPrevious ? [config.unsubscribeSecretPrevious] : [];
  const keys = subscriberKeys(config.unsubscribeSecret, previousSecrets, storedMailboxKey(store));
  const outbox = deps.outbox ?? appOutbox(deps, publishing);
  const signup = signupService({ store, mode: config.signupConfirmation ?? 'single', welcome: config.welcomeEmail === true, keys, outbox });
  const knownPaths = pathsOf(publishing.recaps);
  const figures = config.metricsToken ? createFigures() : null;
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');
  // JSON answers may echo what a client sent (a webhook's event type); with <, > and & written as
  // \u003c escapes, no such echo is markup even if something renders it as HTML.
  app.set('json escape', true);
  const checkProxy = proxyCheck({ trustProxy: config.trustProxy, logger, store });
  app.use((req, _res, next) => {
    checkProxy(req);
    next();
  });
  app.use(requestLogger(logger));
  app.use(securityHeaders(config, renderer.cacheable));
  app.use(compression());

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', readiness(store, logger));
  // No token, no endpoint: /metrics is then the site's ordinary 404.
  if (figures) app.use(metricsRouter({ token: config.metricsToken!, store, figures, logger }));

  // Signed by Resend over the exact bytes sent, so it takes its own raw body parser; no other
  // route's parser runs before it.
  app.use(resendWebhookRouter({ store, secret: config.resendWebhookSecret, keys, logger }));

  // Cross-site posts are refused before they cost a database call; the signup route then runs the
  // limits, the honeypot and the disposable-domain list itself (abuse/signup-screen.ts).
  app.post(
    '/api/subscribe',
    ...(figures ? [figures.countSignups] : []),
    refuseCrossSite(config.siteUrl),
    subscribeRoute({
      counters: store,
      signup,
      secret: config.unsubscribeSecret,
      perMinute: config.rateLimitPerMinute,
      knownPaths,
      mode: config.signupConfirmation ?? 'single',
      perAddressPerDay: config.signupsPerAddressPerDay ?? SIGNUPS_PER_ADDRESS_PER_DAY,
      logger,
    }),
  );
  app.use(confirmRouter({ store, secret: config.unsubscribeSecret, previousSecrets, siteUrl: config.siteUrl, signup, logger }));
  const subscription = { store, secret: config.unsubscribeSecret, previousSecrets, siteUrl: config.siteUrl, keys, signup, mode: config.signupConfirmation ?? 'single', outbox, logger } as const;
  app.use(subscriptionRouter(subscription));
  app.use(subscriptionLinkRouter(subscription));
  app.use(shareLinkRouter({ store, logger }));
  // POST /unsubscribe has no limit per network address: RFC 8058 one-click posts come from a
  // mailbox provider's few servers for all of its users, and the token is an HMAC, so there is
  // nothing to guess. A bad token is refused by that check in memory, before any database call.
  app.use(unsubscribeRouter({ store, secret: config.unsubscribeSecret, previousSecrets, siteUrl: config.siteUrl, logger }));
  app.all('/api/subscribe', (_req, res) => {
    res.set('Allow', 'POST');
    sendError(res, 405, 'method_not_allowed', 'Sign up with a POST request, e.g. {"email": "you@example.com"}.');
  });
  app.all('/api/{*rest}', (_req, res) => sendError(res, 404, 'not_found', 'There is no such API endpoint.'));
  app.use(site.feeds);
  app.use(site.pageData);
  app.use(site.shareCards);

  serveAssets(app, assets);

  app.use(trailingSlashRedirect);

  app.use(
    previewRouter({
      publicSite: site,
      publishing,
      renderer,
      siteUrl: config.siteUrl,
      secret: config.unsubscribeSecret,
      sender: config.mailer?.from ?? DEFAULT_MAIL_FROM,
      onRenderError,
    }),
  );
  const weeks = { weekAt: site.site.weekAt, isPublicNow: site.site.isPublicNow, clock: publishing.clock };
  app.use(goLinksRouter({ ...weeks, store, siteUrl: config.siteUrl, secret: config.unsubscribeSecret, logger }));
  app.get('/{*path}', site.pages);
  app.all('/{*path}', (_req, res) => {
    res.status(405).set('Allow', 'GET, HEAD').type('text').send('This address only answers GET and HEAD requests.');
  });

  app.use(errorHandler((error, req) => logger.error({ err: error, method: req.method, path: req.path }, 'request failed')));
  // The caller stops the outbox before it closes the store (bin/start-server.ts, tests/support/server.ts);
  // the notice webhook's worker stops with it.
  return Object.assign(app, { outbox: withNoticeWebhook(deps, outbox), referralMilestones: writeReferralMilestones(deps) });
}

/**
 * With NOTICE_WEBHOOK_URL, the worker that posts operator notices to it, started beside the outbox
 * and stopped with it, so every caller that stops the outbox stops both.
 */
function withNoticeWebhook({ config, store, logger }: AppDeps, outbox: OutboxWorker): OutboxWorker {
  if (!config.noticeWebhookUrl) return outbox;
  const webhook = createNoticeWebhookWorker({
    store,
    url: config.noticeWebhookUrl,
    log: { info: (line) => logger.info(line), warn: (line) => logger.warn(line) },
    // Retried like the outbox's mail, by the same settings.
    pollSeconds: config.outbox?.pollSeconds,
    leaseSeconds: config.outbox?.leaseSeconds,
    retryMaxSeconds: config.outbox?.retryMaxSeconds,
  });
  webhook.start();
  return {
    start: () => outbox.start(),
    wake: () => outbox.wake(),
    deliverDue: () => outbox.deliverDue(),
    stop: async () => {
      await Promise.all([outbox.stop(), webhook.stop()]);
    },
  };
}

/**
 * The outbox worker of an app given none: polls the store and sends through the given mailer, or
 * one made from config.mailer with the outbox's own short per-claim policy.
 */
function appOutbox({ config, store, logger, mailer }: AppDeps, publishing: Publishing): OutboxWorker {
  const newestFirst = [...publishing.recaps].sort(byDateNewestFirst);
  let made: Promise<Mailer> | undefined;
  const worker = createOutboxWorker({
    store,
    mailer: () => {
      if (mailer) return Promise.resolve(mailer);
      if (!config.mailer) return Promise.reject(new Error('No mailer is configured for confirmation and welcome e-mails.'));
      made ??= createMailer(config.mailer, { policy: OUTBOX_DELIVERY_POLICY });
      return made;
    },
    compose: subscriberMail({
      siteUrl: config.siteUrl,
      secret: config.unsubscribeSecret,
      // The newest week public when the welcome was queued, in DIGEST_TZ as the site says.
      newestRecap: (at) => newestFirst.find((recap) => isPublic(recap, { now: at, timeZone: publishing.timeZone })),
    }),
    log: { info: (line) => logger.info(line), warn: (line) => logger.warn(line) },
    ...config.outbox,
    operatorEmail: config.operatorEmail,
    noticeWebhook: Boolean(config.noticeWebhookUrl),
  });
  worker.start();
  return worker;
}

/**
 * Requests Node's HTTP parser rejects before Express sees them (headers or address over 16 KB,
 * malformed HTTP) get a status line and a sentence instead of a bare close.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return;
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const text = tooLarge ? 'The request address or headers are too long.' : 'The request could not be understood.';
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  });
}

/**
 * REFERRAL_MILESTONES into the database, where the credit of a referral (a trigger) reads them.
 * Written at every start, so the running configuration is the one in force; a store that cannot
 * take it now is logged, and the milestones in force stay as the last start left them.
 */
async function writeReferralMilestones({ config, store, logger }: AppDeps): Promise<void> {
  try {
    await store.setReferralMilestones(config.referralMilestones ?? []);
  } catch (error) {
    logger.error({ err: error }, 'REFERRAL_MILESTONES could not be written to the store');
  }
}
