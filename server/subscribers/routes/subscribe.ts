// POST /api/subscribe: JSON for the enhanced form and API clients, an HTML form post (303 back to
// the page, outcome in the query) for readers without JavaScript. It runs last in the signup's
// chain (server/app.ts), after the bot screen (abuse/signup-guard.ts), which has read and parsed
// the body and, for a signup it let through, left the database's decision on res.locals; this
// route writes the answer, or explains a body that holds no usable address.
import type { Request, RequestHandler, Response } from 'express';
import { sendError } from '../../http/errors.ts';
import { answerFor, backToForm, parseSignup, sendSignupAnswer, signupBodyKind } from '../signup.ts';
import type { SignupDecision } from '../../store/types.ts';

export interface SubscribeOptions {
  /** Paths a form may come from; anything else is sent back to the home page. */
  knownPaths: ReadonlySet<string>;
}

export function subscribeRoute({ knownPaths }: SubscribeOptions): RequestHandler {
  return (req: Request, res: Response) => {
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
    // The e-mail it promises was queued in the same transaction, and is sent by the outbox: the
    // answer never waits for it, so its timing cannot say which addresses are new.
    sendSignupAnswer(res, viaForm ? parsed.sourcePath : null, answerFor(res.locals.signupDecision as SignupDecision));
  };
}
