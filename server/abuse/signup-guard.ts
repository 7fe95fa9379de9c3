// The bot defences in front of POST /api/subscribe, for the JSON API and the no-JavaScript form
// alike: a limit per network address, the honeypot, the disposable-domain list and a limit per
// mailbox. A post that passes the first and is a real signup goes to the database in ONE call
// (signup_counted): its two counts and, within both limits, the signup itself. Any other post
// costs one count of its network address. The route (subscribers/routes/subscribe.ts) then answers from the
// decision left on res.locals.signupDecision, or explains a body it cannot use.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { honeypotFilled } from '../../client/honeypot.ts';
import { ADDRESS_RATE_LIMITED_MESSAGE, DISPOSABLE_EMAIL_MESSAGE, RATE_LIMITED_MESSAGE, type SignupOutcome } from '../../client/signup-outcome.ts';
import { sendError } from '../http/errors.ts';
import type { Logger } from '../http/logger.ts';
import { mailboxKey } from '../subscribers/mailbox-key.ts';
import { backToForm, BODY_LIMIT, DOUBLE_MODE_ANSWER, isFormPost, newAddressAnswer, parseSignup, safeSourcePath, sendSignupAnswer, signupBodyKind, UNAVAILABLE_MESSAGE, type SignupService } from '../subscribers/signup.ts';
import type { RateLimitCount, RateLimitCounters } from '../store/rate-limit-counters.ts';
import type { CountedSignup, SignupMode } from '../store/types.ts';
import { isDisposableAddress } from './disposable.ts';
import { networkAddressKey } from '../http/network-address-key.ts';
import { rateLimitHasher } from './keyed-hash.ts';

/** At most this many signups of one mailbox per day (however its address is spelled), whoever sends them (issues 13, 22). */
export const SIGNUPS_PER_ADDRESS_PER_DAY = 3;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
export interface SignupGuardOptions {
  counters: Pick<RateLimitCounters, 'hitRateLimit'>;
  signup: Pick<SignupService, 'signUpCounted'>;
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

/** A refusal the screen gives itself: JSON, or for the no-JavaScript form (`formPath`) a 303 back to its page. */
function screenAnswer(res: Response, formPath: string | null, outcome: SignupOutcome, status: number, body: object): void {
  if (formPath !== null) backToForm(res, formPath, outcome);
  else res.status(status).json(body);
}

/** Runs a body parser as a step of its own: its error (413, malformed JSON) is kept for after the network address's limit. */
const parsed = (parser: RequestHandler, req: Request, res: Response) =>
  new Promise<unknown>((resolve) => {
    void parser(req, res, (error?: unknown) => resolve(error));
  });

export function signupGuard({ counters, signup, secret, perMinute, perAddressPerDay, knownPaths, mode, logger }: SignupGuardOptions): RequestHandler {
  const keyedHash = rateLimitHasher(secret);
  const json = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json' });
  const form = express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 16 });
  let trapped = 0;

  return async (req: Request, res: Response, next: NextFunction) => {
    const ip = req.ip;
    const network = { key: keyedHash('ip', networkAddressKey(ip ?? '')), limit: perMinute, windowMs: MINUTE_MS };
    // The body (at most 4 KB) is read before anything is counted, so a real signup's counts and
    // its row go in one call; a bad body is answered only once the post is counted (below).
    const bodyError = (await parsed(json, req, res)) ?? (await parsed(form, req, res));
    const bodyKind = signupBodyKind(req, res);
    const viaForm = bodyKind === 'form';
    const parsedSignup = bodyError === undefined && bodyKind !== null ? parseSignup(req, res, knownPaths) : null;
    const honeypot = parsedSignup !== null && honeypotFilled(req.body);
    const email = parsedSignup?.ok && !honeypot && !isDisposableAddress(parsedSignup.email) ? parsedSignup.email : null;
    const formPath = () => (parsedSignup ? parsedSignup.sourcePath : safeSourcePath(refererPath(req), knownPaths));

    let counted: CountedSignup;
    try {
      counted =
        email !== null
          ? await signup.signUpCounted(
              email,
              parsedSignup!.sourcePath,
              ip,
              {
                network,
                // Per mailbox, not per spelling: victim+1@gmail.com and v.ictim@gmail.com share one count.
                mailbox: { key: keyedHash('email', mailboxKey(email)), limit: perAddressPerDay, windowMs: DAY_MS },
              },
              parsedSignup!.ok ? parsedSignup!.origin : {},
            )
          : { network: await counters.hitRateLimit(network.key, 1, network.windowMs, false), mailbox: null, decision: null };
    } catch (error) {
      // Unreachable store or an unexpected database answer: the address was not saved, and the
      // reader's only useful move is to try again later. Never a 500.
      logger.error({ err: error }, 'signup could not be stored');
      if (viaForm || isFormPost(req)) return backToForm(res, formPath(), 'unavailable');
      return sendError(res, 503, 'unavailable', UNAVAILABLE_MESSAGE);
    }

    if (counted.network.points > perMinute) {
      retryAfter(res, counted.network);
      // The body is not looked at; the form's page is the best place to say why.
      if (isFormPost(req)) return backToForm(res, safeSourcePath(refererPath(req), knownPaths), 'rate-limited');
      return sendError(res, 429, 'too_many_requests', RATE_LIMITED_MESSAGE);
    }
    if (bodyError !== undefined) return next(bodyError);
    // No body the route can read, or an invalid address: the route's to explain.
    if (parsedSignup === null || !parsedSignup.ok) return next();
    const answerPath = viaForm ? parsedSignup.sourcePath : null;

    if (honeypot) {
      trapped += 1;
      logger.info({ honeypot: trapped }, `signup honeypot filled (${trapped} since start): answered as a success, nothing stored or sent`);
      // Exactly what a new address gets in this mode (subscribers/routes/subscribe.ts), so the bot cannot tell.
      return sendSignupAnswer(res, answerPath, newAddressAnswer(mode));
    }
    if (email === null) return screenAnswer(res, answerPath, 'disposable-email', 400, { error: 'invalid_email', message: DISPOSABLE_EMAIL_MESSAGE });
    if (counted.decision === null) {
      // Over the limit per mailbox. Double mode answers 202 whatever the address's state; a mailbox
      // over its limit is one more such state, and a bot spraying its spellings learns nothing.
      if (mode === 'double') return sendSignupAnswer(res, answerPath, DOUBLE_MODE_ANSWER);
      if (counted.mailbox) retryAfter(res, counted.mailbox);
      return screenAnswer(res, answerPath, 'address-rate-limited', 429, { error: 'too_many_requests', message: ADDRESS_RATE_LIMITED_MESSAGE });
    }
    res.locals.signupDecision = counted.decision;
    next();
  };
}
