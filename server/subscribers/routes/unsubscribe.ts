// Leaving the list. GET shows a page with a button and changes nothing, because mail scanners and
// link previewers open every link in a message. POST unsubscribes at once: the button on that page,
// or a mail client's RFC 8058 one-click request (body `List-Unsubscribe=One-Click`), both with the
// signed token in the query string. Answers are short, complete HTML pages, never redirects.
//
// The token travels with every forwarded digest, so these pages follow the subscription page's
// rule: the address is shown masked, and "Subscribe again" posts to that page's own button
// (routes/subscription.ts), which mails a fresh link (single mode) or a confirmation (double mode)
// to the address and changes nothing by itself.
//
// A valid token whose subscriber no longer exists (deleted at their request, or an unconfirmed
// signup pruned) answers 410 "this link has expired": every link made for a deleted id says so,
// and the outcome the reader wants (no more e-mail) already holds.
import express, { type Request, type Router } from 'express';
import { createElement as h, type ReactNode } from 'react';
import { site } from '../../../content/site.ts';
import type { Logger } from '../../http/logger.ts';
import type { SiteStore } from '../../store/types.ts';
import { maskEmail } from '../link-tokens.ts';
import { noReferrer, page, send } from '../../http/small-page.ts';
import { verifyUnsubscribeToken } from '../signed-links.ts';

export interface UnsubscribeOptions {
  store: SiteStore;
  secret: string;
  /** Secrets that signed links before the last rotation (UNSUBSCRIBE_SECRET_PREVIOUS). */
  previousSecrets?: readonly string[];
  siteUrl: string;
  logger: Logger;
}

export const unsubscribeText = {
  confirmTitle: 'Unsubscribe from Launched Weekly?',
  confirmBody: (email: string) => `Press the button to stop the Monday e-mail to ${email}.`,
  confirmButton: 'Unsubscribe',
  doneTitle: 'You are unsubscribed',
  doneBody: (email: string) => `${email} will get no more e-mail from ${site.name}.`,
  alreadyTitle: 'You are already unsubscribed',
  alreadyBody: (email: string) => `${email} is not on the list and gets no e-mail from ${site.name}.`,
  resubscribeLead: 'Changed your mind?',
  resubscribeButton: 'Subscribe again',
  expiredTitle: 'This link has expired',
  expiredBody: 'The address it was made for is no longer on our list, so it gets no e-mail from us, and we keep nothing about it.',
  invalidTitle: 'This unsubscribe link is not valid',
  invalidBody:
    'It may have been cut short or changed on its way here. Use the Unsubscribe link at the bottom of one of our e-mails, or write to us and we will take you off the list.',
  unavailableTitle: 'Please try again in a few minutes',
  unavailableBody: 'We could not reach our list just now, so nothing has changed yet.',
  home: `← Back to ${site.name}`,
} as const;

/** "Subscribe again": the subscription page's own button, for the same token. */
function resubscribeForm(token: string): ReactNode {
  return h(
    'form',
    { method: 'post', action: `/subscription?token=${encodeURIComponent(token)}` },
    h('p', null, unsubscribeText.resubscribeLead),
    h('input', { type: 'hidden', name: 'action', value: 'resubscribe' }),
    h('button', { type: 'submit', className: 'secondary' }, unsubscribeText.resubscribeButton),
  );
}


const invalidPage = (home: string) =>
  page({
    title: unsubscribeText.invalidTitle,
    home,
    children: h('p', null, unsubscribeText.invalidBody, ' ', h('a', { href: `mailto:${site.contactEmail}` }, site.contactEmail)),
  });

const expiredPage = (home: string) => page({ title: unsubscribeText.expiredTitle, home, children: h('p', null, unsubscribeText.expiredBody) });

const unavailablePage = (home: string) => page({ title: unsubscribeText.unavailableTitle, home, children: h('p', null, unsubscribeText.unavailableBody) });

const tokenOf = (req: Request): unknown => req.query.token;

export function unsubscribeRouter({ store, secret, previousSecrets = [], siteUrl, logger }: UnsubscribeOptions): Router {
  const router = express.Router();
  const home = `${siteUrl.replace(/\/+$/, '')}/`;
  // One-click posts a tiny form body; the token in the query string is what counts.
  const form = express.urlencoded({ limit: '1kb', extended: false, parameterLimit: 5 });

  router.get('/unsubscribe', noReferrer, async (req, res) => {
    const token = tokenOf(req);
    const id = verifyUnsubscribeToken(token, secret, previousSecrets);
    if (!id) return send(res, 400, invalidPage(home));
    try {
      const subscriber = await store.findSubscriber(id);
      if (!subscriber) return send(res, 410, expiredPage(home));
      if (!subscriber.active) {
        return send(
          res,
          200,
          page({
            home,
            title: unsubscribeText.alreadyTitle,
            children: [h('p', { key: 'body' }, unsubscribeText.alreadyBody(maskEmail(subscriber.email))), h('div', { key: 'form' }, resubscribeForm(token as string))],
          }),
        );
      }
      return send(
        res,
        200,
        page({
          home,
          title: unsubscribeText.confirmTitle,
          children: [
            h('p', { key: 'body' }, unsubscribeText.confirmBody(maskEmail(subscriber.email))),
            h(
              'form',
              { key: 'form', method: 'post', action: `/unsubscribe?token=${encodeURIComponent(token as string)}` },
              h('button', { type: 'submit' }, unsubscribeText.confirmButton),
            ),
          ],
        }),
      );
    } catch (error) {
      logger.error({ err: error }, 'unsubscribe page could not read the subscriber');
      return send(res, 503, unavailablePage(home));
    }
  });

  router.post('/unsubscribe', noReferrer, form, async (req, res) => {
    const token = tokenOf(req);
    const id = verifyUnsubscribeToken(token, secret, previousSecrets);
    if (!id) return send(res, 400, invalidPage(home));
    try {
      const removed = await store.removeSubscriber(id, 'unsubscribed');
      const subscriber = removed ? await store.findSubscriber(id) : null;
      if (!subscriber) return send(res, 410, expiredPage(home));
      logger.info({ subscriber: id }, 'unsubscribed');
      return send(
        res,
        200,
        page({
          home,
          title: unsubscribeText.doneTitle,
          children: [h('p', { key: 'body' }, unsubscribeText.doneBody(maskEmail(subscriber.email))), h('div', { key: 'form' }, resubscribeForm(token as string))],
        }),
      );
    } catch (error) {
      logger.error({ err: error }, 'unsubscribe could not be stored');
      // A 5xx tells a one-click sender to try again later; the reader sees why.
      return send(res, 503, unavailablePage(home));
    }
  });

  return router;
}
