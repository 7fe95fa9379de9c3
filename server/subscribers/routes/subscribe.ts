// POST /api/subscribe: JSON for the enhanced form and API clients, an HTML form post (303 back to
// the page, outcome in the query) for readers without JavaScript. The route owns the whole flow: it
// reads the body, runs the bot screen's checks (abuse/signup-screen.ts), asks the database once and
// answers. A real signup's two counts and its row go in that one call (signup_counted); any other
// post costs one count of its network address, and a bad body is explained only once it is counted.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ADDRESS_RATE_LIMITED_MESSAGE, DISPOSABLE_EMAIL_MESSAGE, RATE_LIMITED_MESSAGE, type SignupOutcome } from '../../../shared/signup-outcome.ts';
import { rateLimitHasher } from '../../abuse/keyed-hash.ts';
import { mailboxLimit, networkLimit, screenSignup, type ScreenVerdict } from '../../abuse/signup-screen.ts';
import { sendError } from '../../http/errors.ts';
import type { Logger } from '../../http/logger.ts';
import type { RateLimitCount, RateLimitCounters } from '../../store/rate-limit-counters.ts';
import type { CountedSignup, RateLimit, SignupMode } from '../../store/types.ts';
import { mailboxKey } from '../mailbox-key.ts';
import {
  answerFor,
  backToForm,
  BODY_LIMIT,
  DOUBLE_MODE_ANSWER,
  isFormPost,
  newAddressAnswer,
  parseSignup,
  safeSourcePath,
  sendSignupAnswer,
  signupBodyKind,
  UNAVAILABLE_MESSAGE,
  type ParsedSignup,
  type SignupService,
} from '../signup.ts';

export interface SubscribeOptions {
  counters: Pick<RateLimitCounters, 'hitRateLimit'>;
  signup: Pick<SignupService, 'signUpCounted'>;
  /** Keys the hashes under which addresses are counted (the database never sees an address). */
  secret: string;
  /** RATE_LIMIT_PER_MINUTE: signup posts per network address per minute. */
  perMinute: number;
  /** Signups of one e-mail address per day (SIGNUPS_PER_ADDRESS_PER_DAY). */
  perAddressPerDay: number;
  /** Paths a form may come from; anything else is sent back to the home page. */
  knownPaths: ReadonlySet<string>;
  /** SIGNUP_CONFIRMATION: what a successful signup answers, which the honeypot imitates. */
  mode: SignupMode;
  logger: Logger;
}

function refererPath(req: Request): string | undefined {
  try {
    return new URL(req.get('referer') ?? '').pathname;
  } catch {
    return undefined;
  }
}

function retryAfter(res: Response, count: RateLimitCount) {
  res.set('Retry-After', String(Math.max(1, Math.ceil(count.msLeft / 1000))));
}

/** A refusal of the screen's: JSON, or for the no-JavaScript form (`formPath`) a 303 back to its page. */
function screenAnswer(res: Response, formPath: string | null, outcome: SignupOutcome, status: number, body: object): void {
  if (formPath !== null) backToForm(res, formPath, outcome);
  else res.status(status).json(body);
}

/** Runs a body parser as a step of its own: its error (413, malformed JSON) is kept for after the network address's limit. */
const parsedBy = (parser: RequestHandler, req: Request, res: Response) =>
  new Promise<unknown>((resolve) => {
    void parser(req, res, (error?: unknown) => resolve(error));
  });

/** The post as the route first reads it: its body's error or kind, the signup in it, and the screen's verdict. */
interface ReadPost {
  bodyError: unknown;
  viaForm: boolean;
  signup: ParsedSignup | null;
  verdict: ScreenVerdict | null;
}

export function subscribeRoute({ counters, signup: service, secret, perMinute, perAddressPerDay, knownPaths, mode, logger }: SubscribeOptions): RequestHandler {
  const keyedHash = rateLimitHasher(secret);
  const json = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json' });
  const form = express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 16 });
  let trapped = 0;

  /** The body (at most 4 KB) is read before anything is counted, so a real signup's counts and row go in one call. */
  async function readPost(req: Request, res: Response): Promise<ReadPost> {
    const bodyError = (await parsedBy(json, req, res)) ?? (await parsedBy(form, req, res));
    const bodyKind = signupBodyKind(req);
    const signup = bodyError === undefined && bodyKind !== null ? parseSignup(req.body, knownPaths) : null;
    return { bodyError, viaForm: bodyKind === 'form', signup, verdict: signup?.ok ? screenSignup(signup.email, req.body) : null };
  }

  /** Only a real signup is counted against its mailbox and stored; any other post counts against its network address alone. */
  function count({ signup, verdict }: ReadPost, ip: string | undefined, network: RateLimit): Promise<CountedSignup> {
    if (signup?.ok && verdict === 'signup') {
      return service.signUpCounted(signup.email, signup.sourcePath, ip, { network, mailbox: mailboxLimit(keyedHash, mailboxKey(signup.email), perAddressPerDay) }, signup.origin);
    }
    return counters.hitRateLimit(network.key, 1, network.windowMs, false).then((counted) => ({ network: counted, mailbox: null, decision: null }));
  }

  return async (req: Request, res: Response, next: NextFunction) => {
    const post = await readPost(req, res);
    const { bodyError, viaForm, signup, verdict } = post;
    let counted: CountedSignup;
    try {
      counted = await count(post, req.ip, networkLimit(keyedHash, req.ip, perMinute));
    } catch (error) {
      // Unreachable store or an unexpected database answer: the address was not saved, and the
      // reader's only useful move is to try again later. Never a 500.
      logger.error({ err: error }, 'signup could not be stored');
      const formPath = signup ? signup.sourcePath : safeSourcePath(refererPath(req), knownPaths);
      if (viaForm || isFormPost(req)) return backToForm(res, formPath, 'unavailable');
      return sendError(res, 503, 'unavailable', UNAVAILABLE_MESSAGE);
    }

    if (counted.network.points > perMinute) {
      retryAfter(res, counted.network);
      // The body is not looked at; the form's page is the best place to say why.
      if (isFormPost(req)) return backToForm(res, safeSourcePath(refererPath(req), knownPaths), 'rate-limited');
      return sendError(res, 429, 'too_many_requests', RATE_LIMITED_MESSAGE);
    }
    if (bodyError !== undefined) return next(bodyError);
    if (signup === null) {
      return sendError(res, 415, 'unsupported_media_type', 'Send the address as JSON, e.g. {"email": "you@example.com"}, or as a form.');
    }
    if (!signup.ok) {
      if (viaForm) return backToForm(res, signup.sourcePath, 'invalid-email');
      return sendError(res, 400, 'invalid_email', signup.message);
    }
    const answerPath = viaForm ? signup.sourcePath : null;
    if (verdict === 'honeypot') {
      trapped += 1;
      logger.info({ honeypot: trapped }, `signup honeypot filled (${trapped} since start): answered as a success, nothing stored or sent`);
      // Exactly what a new address gets in this mode, so the bot cannot tell.
      return sendSignupAnswer(res, answerPath, newAddressAnswer(mode));
    }
    if (verdict === 'disposable') return screenAnswer(res, answerPath, 'disposable-email', 400, { error: 'invalid_email', message: DISPOSABLE_EMAIL_MESSAGE });
    if (counted.decision === null) {
      // Over the limit per mailbox. Double mode answers 202 whatever the address's state; a mailbox
      // over its limit is one more such state, and a bot spraying its spellings learns nothing.
      if (mode === 'double') return sendSignupAnswer(res, answerPath, DOUBLE_MODE_ANSWER);
      if (counted.mailbox) retryAfter(res, counted.mailbox);
      return screenAnswer(res, answerPath, 'address-rate-limited', 429, { error: 'too_many_requests', message: ADDRESS_RATE_LIMITED_MESSAGE });
    }
    // The e-mail it promises was queued in the same transaction, and is sent by the outbox: the
    // answer never waits for it, so its timing cannot say which addresses are new.
    sendSignupAnswer(res, answerPath, answerFor(counted.decision));
  };
}
