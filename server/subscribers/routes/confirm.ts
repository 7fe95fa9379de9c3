// Double opt-in confirmation. GET /confirm?token= shows a page with a 'Confirm my subscription'
// button and changes nothing: mail scanners and link previewers open every link in a message,
// and a confirmation they could trigger would confirm nothing about the person. Only the button's
// POST confirms. The token is signed, names the record and its link version, and expires after 7
// days; an expired or altered link, or one made before the record last changed state (a complaint,
// a bounce, an unsubscribe), gets a page that says so, with the signup form to start again. The
// address is shown masked, as on every page a token reaches (the e-mail may have been forwarded).
import express, { type Request, type Response, type Router } from 'express';
import { createElement as h, type ReactNode } from 'react';
import { site } from '../../../content/site.ts';
import type { Logger } from '../../http/logger.ts';
import type { SiteStore } from '../../store/types.ts';
import type { SignupService } from '../signup.ts';
import { maskEmail } from '../link-tokens.ts';
import { noReferrer, page, send } from '../../http/small-page.ts';
import { CONFIRM_TOKEN_DAYS, verifyConfirmToken, type ConfirmTokenCheck } from '../signed-links.ts';

export interface ConfirmOptions {
  store: SiteStore;
  secret: string;
  previousSecrets?: readonly string[];
  siteUrl: string;
  signup: SignupService;
  logger: Logger;
  now?: () => Date;
}

export const confirmText = {
  askTitle: 'Confirm your subscription',
  askBody: (email: string) => `Press the button to start the Monday e-mail to ${email}.`,
  button: 'Confirm my subscription',
  doneTitle: 'You are subscribed',
  doneBody: (email: string) => `${email} will get the ${site.name} Top 10 every Monday.`,
  alreadyTitle: 'Already confirmed',
  alreadyBody: (email: string) => `${email} is on the list; there is nothing more to do.`,
  expiredTitle: 'This confirmation link has expired',
  expiredBody: `Confirmation links work for ${CONFIRM_TOKEN_DAYS} days. Sign up again below and we will send you a new one.`,
  invalidTitle: 'This confirmation link is not valid',
  invalidBody: 'It may have been cut short or changed on its way here. Sign up again below and we will send you a new one.',
  goneTitle: 'This confirmation link is no longer valid',
  goneBody: 'The signup it was made for has been removed or changed since. Sign up again below and we will send you a new one.',
  unavailableTitle: 'Please try again in a few minutes',
  unavailableBody: 'We could not reach our list just now, so nothing has changed yet.',
  signupLabel: 'Your email address',
  signupButton: site.signup.button,
} as const;

/** The signup form as plain HTML, for readers whose link did not work. */
function signupForm(): ReactNode {
  return h(
    'form',
    { method: 'post', action: '/api/subscribe' },
    h('p', null, h('label', { htmlFor: 'confirm-signup-email' }, confirmText.signupLabel)),
    h('input', { id: 'confirm-signup-email', type: 'email', name: 'email', required: true, autoComplete: 'email', style: { font: 'inherit', padding: '.5rem', width: '100%', marginBottom: '.75rem' } }),
    h('input', { type: 'hidden', name: 'source', value: '/' }),
    h('button', { type: 'submit' }, confirmText.signupButton),
  );
}

export function confirmRouter(options: ConfirmOptions): Router {
  const { store, secret, previousSecrets = [], siteUrl, signup, logger, now = () => new Date() } = options;
  const router = express.Router();
  const home = `${siteUrl.replace(/\/+$/, '')}/`;
  const form = express.urlencoded({ limit: '1kb', extended: false, parameterLimit: 5 });
  const show = (res: Response, status: number, title: string, children: ReactNode[]) =>
    send(res, status, page({ title, home, children: children.map((child, index) => h('div', { key: index }, child)) }));
  const badLink = (res: Response, check: Exclude<ConfirmTokenCheck, { ok: true }>) =>
    check.reason === 'expired'
      ? show(res, 410, confirmText.expiredTitle, [h('p', null, confirmText.expiredBody), signupForm()])
      : show(res, 400, confirmText.invalidTitle, [h('p', null, confirmText.invalidBody), signupForm()]);
  // A deleted (or pruned) subscriber's link has expired, like every other link for its id (410);
  // one whose signup changed since (unsubscribed) is merely spent.
  const gone = (res: Response, deleted = false) => show(res, deleted ? 410 : 200, confirmText.goneTitle, [h('p', null, confirmText.goneBody), signupForm()]);
  const unavailable = (res: Response, error: unknown) => {
    logger.error({ err: error }, 'confirmation could not reach the store');
    show(res, 503, confirmText.unavailableTitle, [h('p', null, confirmText.unavailableBody)]);
  };
  const check = (req: Request) => verifyConfirmToken(req.query.token, now(), secret, previousSecrets);

  router.get('/confirm', noReferrer, async (req, res) => {
    const checked = check(req);
    if (!checked.ok) return badLink(res, checked);
    try {
      const target = await store.linkTarget(checked.subscriberId);
      if (!target) return gone(res, true);
      const masked = maskEmail(target.email);
      if (target.status === 'active') return show(res, 200, confirmText.alreadyTitle, [h('p', null, confirmText.alreadyBody(masked))]);
      // What the button's POST would refuse (confirm_subscriber_link), said before it is pressed.
      const stale = checked.version === undefined ? target.status !== 'pending' : checked.version !== target.linkVersion;
      if (stale || target.status === 'unsubscribed') return gone(res);
      return show(res, 200, confirmText.askTitle, [
        h('p', null, confirmText.askBody(masked)),
        h('form', { method: 'post', action: `/confirm?token=${encodeURIComponent(String(req.query.token))}` }, h('button', { type: 'submit' }, confirmText.button)),
      ]);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  router.post('/confirm', noReferrer, form, async (req, res) => {
    const checked = check(req);
    if (!checked.ok) return badLink(res, checked);
    try {
      // With WELCOME_EMAIL=on, the welcome is queued in the same transaction.
      const result = await signup.confirm(checked.subscriberId, checked.version, req.ip);
      if (!result) return gone(res, true);
      if (result.activated) {
        logger.info({ subscriber: checked.subscriberId }, 'subscription confirmed');
        return show(res, 200, confirmText.doneTitle, [h('p', null, confirmText.doneBody(maskEmail(result.email)))]);
      }
      if (result.status === 'active') return show(res, 200, confirmText.alreadyTitle, [h('p', null, confirmText.alreadyBody(maskEmail(result.email)))]);
      if (result.refused) logger.info({ subscriber: checked.subscriberId, status: result.status }, 'confirmation link made before the last change of state refused');
      return gone(res);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  return router;
}
