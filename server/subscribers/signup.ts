// Signup as one service, for every way onto the list: the JSON API and the no-JavaScript form
// (POST /api/subscribe), the confirmation button (/confirm) and "Subscribe again" on the
// subscription page. It parses a signup once, lets the database decide, says what to answer, and
// leaves the e-mail to the durable outbox: the confirmation or welcome row is written in the same
// transaction as the decision that promises it (supabase/migrations/…_mail_outbox.sql), so a
// deploy or crash after the answer delays it, never loses it. The outbox worker is only woken.
import type { Request, Response } from 'express';
import * as z from 'zod';
import { emailProblem, MAX_EMAIL_LENGTH } from '../../content/email-address.ts';
import type { SignupOutcome } from '../../shared/signup-outcome.ts';
import { canonicalAddress } from './mailbox-key.ts';
import type { LinkConfirmation } from '../store/subscriber-links.ts';
import type { CountedSignup, RateLimit, SignupDecision, SignupMode, SignupOrigin, SignupRequest, SiteStore, SubscriberDetails } from '../store/types.ts';
import { attributionFromQuery, landingPath } from '../../content/signup-attribution.ts';
import type { SubscriberKeys } from './subscriber-keys.ts';

/** The request body, for the API and the tests alike. */
export const subscribeBodySchema = z.object(
  {
    email: z
      .string({ message: 'Send the address as a string in the "email" field.' })
      .max(MAX_EMAIL_LENGTH * 4, `An email address has at most ${MAX_EMAIL_LENGTH} characters.`)
      // Trimmed, NFKC, lower-cased, the domain in ASCII (server/subscribers/mailbox-key.ts).
      .transform((raw, ctx) => {
        const canonical = canonicalAddress(raw);
        if (canonical.ok) return canonical.email;
        ctx.addIssue({ code: 'custom', message: canonical.message });
        return z.NEVER;
      })
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
/** The largest signup body read, in bytes (4 KB). */
export const BODY_LIMIT = 4096;

export function isFormPost(req: Request): boolean {
  return req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
}

/** How a signup's body came: the no-JavaScript form, JSON, or neither (the route answers 415). */
export type SignupBodyKind = 'form' | 'json' | null;

export function signupBodyKind(req: Request): SignupBodyKind {
  return isFormPost(req) ? 'form' : req.is('application/json') ? 'json' : null;
}

export function backToForm(res: Response, sourcePath: string, outcome: SignupOutcome) {
  res.redirect(303, `${sourcePath}?signup=${outcome}#email-signup`);
}

export function safeSourcePath(value: unknown, knownPaths: ReadonlySet<string>): string {
  return typeof value === 'string' && knownPaths.has(value) ? value : '/';
}

export type ParsedSignup = { ok: true; email: string; sourcePath: string; origin: SignupOrigin } | { ok: false; message: string; sourcePath: string };

/**
 * Where the signup's visit came from, as the page carried it into the form (hidden fields, or the
 * enhanced form's JSON): tokens only (content/signup-attribution.ts), and a landing page only when
 * it is one of the site's pages. Anything else is dropped, never an error: a reader's signup never
 * fails over how they reached us.
 */
export function signupOrigin(body: unknown, knownPaths: ReadonlySet<string>): SignupOrigin {
  if (typeof body !== 'object' || body === null) return {};
  const { landing, ...origin } = attributionFromQuery(body as Record<string, unknown>);
  const page = landing === undefined ? undefined : landingPath(landing);
  return page !== undefined && knownPaths.has(page) ? { ...origin, page } : origin;
}

/** The signup body: a valid address and the form's page (or the problem with it), and the visit's origin. */
export function parseSignup(body: unknown, knownPaths: ReadonlySet<string>): ParsedSignup {
  const sourcePath = safeSourcePath((body as { source?: unknown } | undefined)?.source, knownPaths);
  const parsed = subscribeBodySchema.safeParse(body ?? {});
  return parsed.success
    ? { ok: true, email: parsed.data.email, sourcePath, origin: signupOrigin(body, knownPaths) }
    : { ok: false, message: parsed.error.issues[0]?.message ?? 'Please enter a valid email address.', sourcePath };
}

/** An answer of the signup route: its status, its JSON body, and the form's outcome. */
export interface SignupAnswer {
  status: number;
  body: { status: string };
  outcome: SignupOutcome;
}

const signupAnswer = (status: number, body: { status: string }, outcome: SignupOutcome): SignupAnswer => ({ status, body, outcome });
const SUBSCRIBED = signupAnswer(201, { status: 'subscribed' }, 'subscribed');
const ALREADY_SUBSCRIBED = signupAnswer(409, { status: 'already_subscribed' }, 'already-subscribed');
const CONFIRMATION_SENT = signupAnswer(202, { status: 'confirmation_sent' }, 'confirmation-sent');

/** What a new address gets in each mode; the honeypot answers the same (routes/subscribe.ts). */
export const newAddressAnswer = (mode: SignupMode): SignupAnswer => (mode === 'double' ? CONFIRMATION_SENT : SUBSCRIBED);

/** A double-mode answer whatever the address's state, a mailbox over its limit included. */
export const DOUBLE_MODE_ANSWER = CONFIRMATION_SENT;

/** Sends a signup answer: its JSON, or for the no-JavaScript form (`formPath`) a 303 back to its page. */
export function sendSignupAnswer(res: Response, formPath: string | null, answer: SignupAnswer): void {
  if (formPath !== null) backToForm(res, formPath, answer.outcome);
  else res.status(answer.status).json(answer.body);
}

/** The answer a signup gets, by what the database decided (DESIGN.md's HTTP contract). */
export function answerFor(decision: SignupDecision): SignupAnswer {
  switch (decision.outcome) {
    case 'subscribed':
      return SUBSCRIBED;
    case 'already_subscribed':
      return ALREADY_SUBSCRIBED;
    // Double mode and suppressed addresses: one answer whatever the state, so the API tells
    // nobody who is on the list.
    case 'send_confirmation':
    case 'nothing_to_send':
      return CONFIRMATION_SENT;
  }
}

export interface SignupServiceOptions {
  store: SiteStore;
  /** SIGNUP_CONFIRMATION. */
  mode: SignupMode;
  /** WELCOME_EMAIL=on. */
  welcome: boolean;
  keys: SubscriberKeys;
  /** Told when a decision queued an e-mail, so it goes out now rather than at the next poll. */
  outbox: { wake(): void };
}

export interface SignupService {
  /**
   * A post to POST /api/subscribe, in the operator's mode: counted against its network address and
   * its mailbox and, within both limits, signed up, in one call to the store.
   */
  signUpCounted(email: string, sourcePath: string, ip: string | undefined, limits: { network: RateLimit; mailbox: RateLimit }, origin?: SignupOrigin): Promise<CountedSignup>;
  /** A signup in the operator's mode with no limit counted ("Subscribe again" in double mode). */
  signUp(email: string, sourcePath: string, ip: string | undefined): Promise<SignupDecision>;
  /** The confirmation button of a link made for link version `version` (undefined: mailed before versions). */
  confirm(subscriberId: string, version: number | undefined, ip: string | undefined): Promise<LinkConfirmation | null>;
  /**
   * "Subscribe again": active at once from unsubscribed or pending; a bounced or complained
   * address gets a (throttled) confirmation e-mail instead, or `nothing_sent` when throttled.
   */
  resubscribe(details: SubscriberDetails, ip: string | undefined): Promise<'resubscribed' | 'confirmation_sent' | 'nothing_sent'>;
}

const queuesMail = (decision: SignupDecision | null, welcome: boolean) =>
  decision !== null && (decision.outcome === 'send_confirmation' || (welcome && decision.outcome === 'subscribed'));

/**
 * Whether a signup may have queued an e-mail: its own, or (single mode, through a share link) the
 * referrer's thanks at a milestone, which a database trigger queues with the new reader's row.
 */
const mayQueueMail = (decision: SignupDecision | null, welcome: boolean, origin: SignupOrigin | undefined) =>
  queuesMail(decision, welcome) || (decision?.outcome === 'subscribed' && origin?.share !== undefined);

export function signupService({ store, mode, welcome, keys, outbox }: SignupServiceOptions): SignupService {
  /** The row a signup from the site or the API writes, in the operator's mode. */
  const requestFor = async (email: string, sourcePath: string, ip: string | undefined, origin?: SignupOrigin): Promise<SignupRequest> => ({
    email,
    source: sourcePath,
    origin,
    mode,
    networkHash: keys.networkHash(ip),
    addressHashes: await keys.addressHashes(email),
    welcome,
  });

  return {
    async signUpCounted(email, sourcePath, ip, { network, mailbox }, origin) {
      const counted = await store.signUpCounted(network, mailbox, await requestFor(email, sourcePath, ip, origin));
      if (mayQueueMail(counted.decision, welcome, origin)) outbox.wake();
      return counted;
    },

    async signUp(email, sourcePath, ip) {
      const decision = await store.signUp(await requestFor(email, sourcePath, ip));
      if (queuesMail(decision, welcome)) outbox.wake();
      return decision;
    },

    async confirm(subscriberId, version, ip) {
      const result = await store.confirmByLink(subscriberId, version, keys.networkHash(ip), welcome);
      // Its welcome, or its referrer's thanks (queued by a trigger when a referred reader first becomes active).
      if (result?.activated) outbox.wake();
      return result;
    },

    async resubscribe(details, ip) {
      const networkHash = keys.networkHash(ip);
      const result = await store.activateSubscriber(details.id, 'resubscribe', networkHash, welcome);
      if (result?.activated) outbox.wake();
      if (result?.activated || result?.status === 'active') return 'resubscribed';
      // Bounced or complained: only a fresh confirmation by the owner brings it back (throttled).
      const decision = await store.signUp({ email: details.email, source: details.source, mode: 'double', networkHash, addressHashes: await keys.addressHashes(details.email), owner: true });
      if (!queuesMail(decision, false)) return 'nothing_sent';
      outbox.wake();
      return 'confirmation_sent';
    },
  };
}
