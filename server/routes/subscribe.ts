// POST /api/subscribe: JSON for the enhanced form and API clients, an HTML form post (303 back to
// the page, outcome in the query) for readers without JavaScript. Both share one schema.
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { emailProblem, MAX_EMAIL_LENGTH, normalizeEmail } from '../../content/email-address.ts';
import type { SignupOutcome } from '../../client/signup-outcome.ts';
import type { SignupDecision, SignupMode, SiteStore } from '../store/types.ts';
import { sendError } from '../errors.ts';
import type { SubscriberKeys } from '../subscriber-keys.ts';
import type { SubscriberMail } from '../subscriber-mail.ts';

/** The request body, for the API and the tests alike. */
export const subscribeBodySchema = z.object(
  {
    email: z
      .string({ message: 'Send the address as a string in the "email" field.' })
      .max(MAX_EMAIL_LENGTH * 4, `An email address has at most ${MAX_EMAIL_LENGTH} characters.`)
      .transform(normalizeEmail)
      .superRefine((email, ctx) => {
        const problem = emailProblem(email);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    // The path of the page the form is on; anything but a known path sends the reader home.
    source: z
      .string({ message: 'The "source" field, when present, is the path of the page the form is on, as a string.' })
      .max(200, 'The "source" field is the path of the page the form is on: at most 200 characters.')
      .optional(),
  },
  { message: 'Send a JSON object with the address in the "email" field, e.g. {"email": "you@example.com"}.' },
);

export const UNAVAILABLE_MESSAGE = 'Please try again later.';

export interface SubscribeOptions {
  store: SiteStore;
  /** Paths a form may come from; anything else is sent back to the home page. */
  knownPaths: ReadonlySet<string>;
  onStoreError: (error: unknown) => void;
  /** SIGNUP_CONFIRMATION. */
  mode: SignupMode;
  keys: SubscriberKeys;
  mail: SubscriberMail;
  /** WELCOME_EMAIL=on. */
  welcome: boolean;
  /** A confirmation or welcome e-mail that could not be sent (the signup itself is stored). */
  onMailError: (error: unknown, kind: 'confirmation' | 'welcome') => void;
}

/** The answer a signup gets, by what the database decided (DESIGN.md's HTTP contract). */
function answerFor(decision: SignupDecision): { status: number; body: { status: string }; outcome: SignupOutcome } {
  switch (decision.outcome) {
    case 'subscribed':
      return { status: 201, body: { status: 'subscribed' }, outcome: 'subscribed' };
    case 'already_subscribed':
      return { status: 409, body: { status: 'already_subscribed' }, outcome: 'already-subscribed' };
    // Double mode and suppressed addresses: one answer whatever the state, so the API tells
    // nobody who is on the list.
    case 'send_confirmation':
    case 'nothing_to_send':
      return { status: 202, body: { status: 'confirmation_sent' }, outcome: 'confirmation-sent' };
  }
}

/**
 * Sends what a signup made due: the confirmation e-mail, or (WELCOME_EMAIL=on) the welcome for a
 * new subscriber, claimed once per address in the database first. A failure is logged, not
 * shown: the address is stored either way.
 */
async function mailAfterSignup(decision: SignupDecision, email: string, options: SubscribeOptions): Promise<void> {
  const { store, mail, welcome, onMailError } = options;
  if (decision.outcome === 'send_confirmation') {
    const sent = await mail.sendConfirmation(decision.subscriberId, email).catch((error: unknown) => ({ status: 'failed' as const, reason: String(error) }));
    if (sent.status === 'failed') {
      onMailError(new Error(`confirmation e-mail not sent: ${sent.reason}`), 'confirmation');
      // The next attempt may send it, instead of being throttled for a mail that never left.
      await store.releaseConfirmation(decision.subscriberId).catch((error: unknown) => onMailError(error, 'confirmation'));
    }
  } else if (decision.outcome === 'subscribed' && welcome) {
    await sendWelcomeOnce(store, mail, decision.subscriberId, email, onMailError);
  }
}

export async function sendWelcomeOnce(
  store: SiteStore,
  mail: SubscriberMail,
  subscriberId: string,
  email: string,
  onMailError: SubscribeOptions['onMailError'],
): Promise<void> {
  try {
    if (!(await store.claimWelcome(subscriberId))) return;
    const sent = await mail.sendWelcome(subscriberId, email);
    if (sent.status === 'failed') onMailError(new Error(`welcome e-mail not sent: ${sent.reason}`), 'welcome');
  } catch (error) {
    onMailError(error, 'welcome');
  }
}

export const BODY_LIMIT = '4kb';

function isFormPost(req: Request): boolean {
  return req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
}

export function backToForm(res: Response, sourcePath: string, outcome: SignupOutcome) {
  res.redirect(303, `${sourcePath}?signup=${outcome}#email-signup`);
}

export function safeSourcePath(value: unknown, knownPaths: ReadonlySet<string>): string {
  return typeof value === 'string' && knownPaths.has(value) ? value : '/';
}

export function subscribeRouter(options: SubscribeOptions): Router {
  const { store, knownPaths, onStoreError, mode, keys } = options;
  const router = express.Router();
  const json = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json' });
  const form = express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 10 });

  router.post('/api/subscribe', json, form, async (req: Request, res: Response) => {
    const viaForm = isFormPost(req);
    if (!viaForm && !req.is('application/json')) {
      sendError(res, 415, 'unsupported_media_type', 'Send the address as JSON, e.g. {"email": "you@example.com"}, or as a form.');
      return;
    }
    const sourcePath = safeSourcePath((req.body as { source?: unknown } | undefined)?.source, knownPaths);
    const parsed = subscribeBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      if (viaForm) return backToForm(res, sourcePath, 'invalid-email');
      sendError(res, 400, 'invalid_email', parsed.error.issues[0]?.message ?? 'Please enter a valid email address.');
      return;
    }
    const { email } = parsed.data;
    let decision: SignupDecision;
    try {
      decision = await store.signUp({
        email,
        source: sourcePath,
        mode,
        networkHash: keys.networkHash(req.ip),
        addressHashes: keys.addressHashes(email),
      });
    } catch (error) {
      onStoreError(error);
      if (viaForm) return backToForm(res, sourcePath, 'unavailable');
      // Unreachable store or an unexpected database answer: either way the address was not saved,
      // and the reader's only useful move is to try again later.
      sendError(res, 503, 'unavailable', UNAVAILABLE_MESSAGE);
      return;
    }
    const answer = answerFor(decision);
    if (viaForm) backToForm(res, sourcePath, answer.outcome);
    else res.status(answer.status).json(answer.body);
    // Only after the answer: if it waited for a confirmation e-mail, its timing would say which
    // addresses are new, which the one answer for every state is there to hide.
    await mailAfterSignup(decision, email, options);
  });

  return router;
}
