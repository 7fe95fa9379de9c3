// POST /api/subscribe: JSON for the enhanced form and API clients, an HTML form post (303 back to
// the page, outcome in the query) for readers without JavaScript. What a signup does is the signup
// service's (server/signup.ts); this route only reads the request and writes the answer. It runs
// last in the signup's chain (server/app.ts), after the bot screen (abuse/signup-guard.ts), which
// has already read and parsed the body.
import type { Request, RequestHandler, Response } from 'express';
import { sendError } from '../errors.ts';
import { answerFor, backToForm, parseSignup, sendSignupAnswer, signupBodyKind, UNAVAILABLE_MESSAGE, type SignupRide, type SignupService } from '../signup.ts';
import type { SignupDecision } from '../store/types.ts';

export interface SubscribeOptions {
  signup: SignupService;
  /** Paths a form may come from; anything else is sent back to the home page. */
  knownPaths: ReadonlySet<string>;
  onStoreError: (error: unknown) => void;
}

export function subscribeRoute({ signup, knownPaths, onStoreError }: SubscribeOptions): RequestHandler {
  return async (req: Request, res: Response) => {
    const bodyKind = signupBodyKind(req, res);
    const viaForm = bodyKind === 'form';
    if (bodyKind === null) {
      sendError(res, 415, 'unsupported_media_type', 'Send the address as JSON, e.g. {"email": "you@example.com"}, or as a form.');
      return;
    }
    const parsed = parseSignup(req, res, knownPaths);
    if (!parsed.ok) {
      if (viaForm) return backToForm(res, parsed.sourcePath, 'invalid-email');
      sendError(res, 400, 'invalid_email', parsed.message);
      return;
    }
    let decision: SignupDecision;
    try {
      // The e-mail it promises is queued in the same transaction, and sent by the outbox: the
      // answer never waits for it, so its timing cannot say which addresses are new.
      // A new address is usually written already, in the statement that counted its limits (signup-guard.ts).
      decision = await signup.signUp(parsed.email, parsed.sourcePath, req.ip, res.locals.signupRide as SignupRide | undefined);
    } catch (error) {
      onStoreError(error);
      if (viaForm) return backToForm(res, parsed.sourcePath, 'unavailable');
      // Unreachable store or an unexpected database answer: either way the address was not saved,
      // and the reader's only useful move is to try again later.
      sendError(res, 503, 'unavailable', UNAVAILABLE_MESSAGE);
      return;
    }
    sendSignupAnswer(res, viaForm ? parsed.sourcePath : null, answerFor(decision));
  };
}
