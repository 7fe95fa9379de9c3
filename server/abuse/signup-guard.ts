// The bot defences in front of POST /api/subscribe, for the JSON API and the no-JavaScript form
// alike. In order: a limit per network address (an address over it is refused from memory before
// its body is read), then the honeypot, the disposable-domain list and a limit per e-mail address. Only a request that passes all of
// them reaches the signup route (routes/subscribe.ts); the body is parsed once, for both (signup.ts).
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { honeypotFilled } from '../../client/honeypot.ts';
import { ADDRESS_RATE_LIMITED_MESSAGE, DISPOSABLE_EMAIL_MESSAGE, RATE_LIMITED_MESSAGE, type SignupOutcome } from '../../client/signup-outcome.ts';
import { sendError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { mailboxKey } from '../mailbox-key.ts';
import { backToForm, BODY_LIMIT, DOUBLE_MODE_ANSWER, isFormPost, newAddressAnswer, parseSignup, safeSourcePath, sendSignupAnswer, signupBodyKind, UNAVAILABLE_MESSAGE, type SignupRide } from '../signup.ts';
import type { RateLimitCounters } from '../store/rate-limit-counters.ts';
import type { SignupMode, SignupRequest } from '../store/types.ts';
import { plainJsonLength, readPlainJson } from '../plain-json-body.ts';
import { isDisposableAddress } from './disposable.ts';
import { rateLimitHasher } from './keyed-hash.ts';
import { RateLimitBatcher, type Waiting } from './rate-limit-batcher.ts';
import { RateLimiterRes, StoreRateLimiter } from './store-rate-limiter.ts';

/** At most this many signups of one mailbox per day (however its address is spelled), whoever sends them (issues 13, 22). */
export const SIGNUPS_PER_ADDRESS_PER_DAY = 3;
const MINUTE_SECONDS = 60;
const DAY_SECONDS = 86_400;
// IPv6 clients usually hold a whole /56 or /64: counting single addresses would let one client
// rotate through billions of them. (express-rate-limit's helper, which the previous limiter used.)
const IPV6_SUBNET = 56;

export interface SignupGuardOptions {
  counters: RateLimitCounters;
  /** Keys the hashes under which addresses are counted (the database never sees an address). */
  secret: string;
  /** RATE_LIMIT_PER_MINUTE: signup posts per network address per minute. */
  perMinute: number;
  /** Signups of one e-mail address per day (SIGNUPS_PER_ADDRESS_PER_DAY). */
  perAddressPerDay: number;
  knownPaths: ReadonlySet<string>;
  /** SIGNUP_CONFIRMATION: what a successful signup answers, which the honeypot imitates. */
  mode: SignupMode;
  logger: Logger;
  /**
   * The row a signup would write, when it may ride along with its counts (signup.ts: single mode
   * without a welcome e-mail), else null. Its fate is left on res.locals.signupRide for the route.
   */
  rideAlong?: (email: string, sourcePath: string, ip: string | undefined) => Promise<SignupRequest> | null;
}

function refererPath(req: Request): string | undefined {
  try {
    return new URL(req.get('referer') ?? '').pathname;
  } catch {
    return undefined;
  }
}

function retryAfter(res: Response, limited: RateLimiterRes) {
  res.set('Retry-After', String(Math.max(1, Math.ceil(limited.msBeforeNext / 1000))));
}

/** A refusal the screen gives itself: JSON, or for the no-JavaScript form (`formPath`) a 303 back to its page. */
function screenAnswer(res: Response, formPath: string | null, outcome: SignupOutcome, status: number, body: object): void {
  if (formPath !== null) backToForm(res, formPath, outcome);
  else res.status(status).json(body);
}

/** A limiter's answer, settled either way so that an answer not waited for cannot go unhandled. */
type Verdict = { limited: RateLimiterRes | null; counted: boolean } | { error: unknown };

/** Runs a body parser as a step of its own: its error (413, malformed JSON) is kept, not passed on. */
const parsed = (parser: RequestHandler, req: Request, res: Response) =>
  new Promise<unknown>((resolve) => {
    void parser(req, res, (error?: unknown) => resolve(error));
  });

/** Answers a post over the limit per network address, or whose count failed (true); false when it may go on. */
function networkAddressAnswer(req: Request, res: Response, result: Verdict, { logger, knownPaths }: Pick<SignupGuardOptions, 'logger' | 'knownPaths'>): boolean {
  if ('error' in result) {
    // The insurance limiter answers while the database is away, so this is not expected; if it
    // happens the reader is told to try later, as for any store failure, never shown a 500.
    logger.error({ err: result.error }, 'signup limit per network address could not be checked');
    if (isFormPost(req)) backToForm(res, safeSourcePath(refererPath(req), knownPaths), 'unavailable');
    else sendError(res, 503, 'unavailable', UNAVAILABLE_MESSAGE);
    return true;
  }
  if (!result.limited) return false;
  retryAfter(res, result.limited);
  // The body is not looked at; the form's page is the best place to say why.
  if (isFormPost(req)) backToForm(res, safeSourcePath(refererPath(req), knownPaths), 'rate-limited');
  else sendError(res, 429, 'too_many_requests', RATE_LIMITED_MESSAGE);
  return true;
}

export function signupGuard({ counters, secret, perMinute, perAddressPerDay, knownPaths, mode, logger, rideAlong }: SignupGuardOptions): { screen: RequestHandler[] } {
  const batcher = new RateLimitBatcher(counters);
  const perNetworkAddress = new StoreRateLimiter({ counters, batcher, keyPrefix: 'signup-ip', points: perMinute, duration: MINUTE_SECONDS });
  const perEmailAddress = new StoreRateLimiter({ counters, batcher, keyPrefix: 'signup-email', points: perAddressPerDay, duration: DAY_SECONDS });
  const keyedHash = rateLimitHasher(secret);
  let trapped = 0;

  /** Counts one post against the limiter's key: `counted` when the count reached the store (or the insurance limiter). */
  function verdict(limiter: StoreRateLimiter, key: string): Promise<Verdict> {
    return limiter.consume(key).then(
      () => ({ limited: null, counted: true }),
      (refusal: unknown) => (refusal instanceof RateLimiterRes ? { limited: refusal, counted: refusal.consumedPoints > 0 } : { error: refusal }),
    );
  }

  /** A mailbox's count taken for a post that is then refused for its network address is given back. */
  function giveBack(counting: Promise<Verdict> | null, key: string) {
    void counting?.then((result) => {
      if (!('error' in result) && result.counted) {
        perEmailAddress.reward(key, 1).catch((error: unknown) => logger.warn({ err: error }, 'a signup count per e-mail address could not be given back'));
      }
    });
  }

  // The same parsers and limits as the signup route's own; a body is parsed once, so the route's
  // parsers then let it through untouched.
  const json = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json' });
  const form = express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 10 });

  /**
   * In order: the limit per network address, the honeypot, the disposable-domain list, the limit
   * per mailbox. The two counts go to the database in one statement (the batcher's): the body (at
   * most 4 KB) is read first, so the mailbox is known, and its count is given back when the network
   * address turns out to be over its limit, so a refused post still counts against no mailbox. A
   * network address already refused from memory is answered before its body is read.
   */
  const screen: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
    const ip = req.ip;
    const networkKey = keyedHash('ip', ipKeyGenerator(ip ?? '', IPV6_SUBNET));
    if (perNetworkAddress.blockedInMemory(networkKey)) {
      networkAddressAnswer(req, res, await verdict(perNetworkAddress, networkKey), { logger, knownPaths });
      return;
    }
    // The usual body (plain JSON) is read by plain-json-body.ts, any other by body-parser.
    const plainLength = plainJsonLength(req, BODY_LIMIT);
    const bodyError = plainLength !== null ? await readPlainJson(req, plainLength) : ((await parsed(json, req, res)) ?? (await parsed(form, req, res)));
    if (plainLength !== null) res.locals.signupBodyKind = 'json';
    const bodyKind = signupBodyKind(req, res);
    const viaForm = bodyKind === 'form';
    const signup = bodyError === undefined && bodyKind !== null ? parseSignup(req, res, knownPaths) : null;
    const honeypot = signup !== null && honeypotFilled(req.body);
    const mailbox = signup?.ok && !honeypot && !isDisposableAddress(signup.email) ? keyedHash('email', mailboxKey(signup.email)) : null;
    const hits: Waiting[] = [];
    const networkCount = batcher.capturing(hits, () => verdict(perNetworkAddress, networkKey));
    const mailboxCount = mailbox === null ? null : batcher.capturing(hits, () => verdict(perEmailAddress, mailbox));
    // Both counts queued (neither refused from memory): the row goes in their statement, written
    // only within both limits. Were a count to time out and the insurance limiter refuse while the
    // statement still wrote the row, the reader would be told to wait yet be on the list; that
    // needs a database slower than COUNT_TIMEOUT_MS and a limit already reached in this process.
    if (rideAlong && mailbox !== null && hits.length === 2 && signup?.ok) {
      const row = rideAlong(signup.email, signup.sourcePath, ip);
      // A statement that failed wrote nothing: the route then signs up the usual way, and answers 503 if the store is down.
      if (row) res.locals.signupRide = row.then(async (ready) => ({ row: ready, subscriberId: await batcher.ride(ready, hits) })).catch(() => null) satisfies SignupRide;
    }
    const network = await networkCount;
    if (mailbox !== null && ('error' in network || network.limited)) giveBack(mailboxCount, mailbox);
    if (networkAddressAnswer(req, res, network, { logger, knownPaths })) return;
    if (bodyError !== undefined) return next(bodyError);
    if (signup === null) return next();
    const { sourcePath } = signup;
    const formPath = viaForm ? sourcePath : null;

    if (honeypot) {
      trapped += 1;
      logger.info({ honeypot: trapped }, `signup honeypot filled (${trapped} since start): answered as a success, nothing stored or sent`);
      // Exactly what a new address gets in this mode (routes/subscribe.ts), so the bot cannot tell.
      return sendSignupAnswer(res, formPath, newAddressAnswer(mode));
    }
    // An invalid address is the route's to explain.
    if (!signup.ok) return next();
    if (mailboxCount === null) return screenAnswer(res, formPath, 'disposable-email', 400, { error: 'invalid_email', message: DISPOSABLE_EMAIL_MESSAGE });
    // Per mailbox, not per spelling: victim+1@gmail.com and v.ictim@gmail.com share one count.
    const counted = await mailboxCount;
    if ('error' in counted) {
      logger.error({ err: counted.error }, 'signup limit per e-mail address could not be checked');
      return viaForm ? backToForm(res, sourcePath, 'unavailable') : sendError(res, 503, 'unavailable', UNAVAILABLE_MESSAGE);
    }
    if (counted.limited) {
      // Double mode answers 202 whatever the address's state; a mailbox over its limit is one more
      // such state, and a bot spraying its spellings learns nothing from the answer.
      if (mode === 'double') return sendSignupAnswer(res, formPath, DOUBLE_MODE_ANSWER);
      retryAfter(res, counted.limited);
      return screenAnswer(res, formPath, 'address-rate-limited', 429, { error: 'too_many_requests', message: ADDRESS_RATE_LIMITED_MESSAGE });
    }
    next();
  };

  return { screen: [screen] };
}
