// Leaving the list. GET shows a page with a button and changes nothing, because mail scanners and
// link previewers open every link in a message. POST unsubscribes at once: the button on that page,
// or a mail client's RFC 8058 one-click request (body `List-Unsubscribe=One-Click`), both with the
// signed token in the query string. Answers are short, complete HTML pages, never redirects.
//
// A valid token whose subscriber no longer exists answers 200 "nothing to do": the outcome the
// reader wants (no more e-mail) already holds, and one-click senders treat any 2xx as done.
import express, { type Request, type Response, type Router } from 'express';
import { createElement as h, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { site } from '../../content/site.ts';
import type { Logger } from '../logger.ts';
import type { SiteStore } from '../store/types.ts';
import { verifyUnsubscribeToken } from '../unsubscribe-token.ts';

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
  unknownTitle: 'Nothing to do',
  unknownBody: 'The address this link was made for is not on our list, so it gets no e-mail from us.',
  invalidTitle: 'This unsubscribe link is not valid',
  invalidBody:
    'It may have been cut short or changed on its way here. Use the Unsubscribe link at the bottom of one of our e-mails, or write to us and we will take you off the list.',
  unavailableTitle: 'Please try again in a few minutes',
  unavailableBody: 'We could not reach our list just now, so nothing has changed yet.',
  home: `← Back to ${site.name}`,
} as const;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;padding:0 1rem;background:#fafaf9;color:#18181b;font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;line-height:1.6}
header,main,footer{max-width:36rem;margin:0 auto;padding:1.25rem 0}
header a{font-weight:800;color:#18181b;text-decoration:none}
main{background:#fff;border:1px solid #e4e4e7;border-radius:1rem;padding:2rem 1.5rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 .75rem}
p{margin:0 0 1rem}
button{font:inherit;font-weight:700;min-height:2.75rem;padding:.5rem 1.25rem;border-radius:.5rem;border:0;background:#18181b;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#18181b;border:2px solid #18181b}
button:focus-visible,a:focus-visible{outline:3px solid #c0265c;outline-offset:2px}
a{color:#c0265c}
footer{font-size:.95rem}
`;

export function page({ title, home, children }: { title: string; home: string; children: ReactNode }): string {
  const document = h(
    'html',
    { lang: 'en' },
    h(
      'head',
      null,
      h('meta', { charSet: 'utf-8' }),
      h('meta', { name: 'viewport', content: 'width=device-width, initial-scale=1' }),
      h('meta', { name: 'robots', content: 'noindex' }),
      h('title', null, `${title} · ${site.name}`),
      h('style', { dangerouslySetInnerHTML: { __html: STYLE } }),
    ),
    h(
      'body',
      null,
      h('header', null, h('a', { href: home }, site.name)),
      h('main', null, h('h1', null, title), children),
      h('footer', null, h('a', { href: home }, unsubscribeText.home)),
    ),
  );
  return `<!doctype html>${renderToStaticMarkup(document)}`;
}

function resubscribeForm(email: string): ReactNode {
  return h(
    'form',
    { method: 'post', action: '/api/subscribe' },
    h('p', null, unsubscribeText.resubscribeLead),
    h('input', { type: 'hidden', name: 'email', value: email }),
    h('input', { type: 'hidden', name: 'source', value: '/' }),
    h('button', { type: 'submit', className: 'secondary' }, unsubscribeText.resubscribeButton),
  );
}

export function send(res: Response, status: number, html: string) {
  // The token in the address is a credential: keep it out of caches, referrers and indexes.
  res
    .status(status)
    .set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Robots-Tag': 'noindex' })
    .type('html')
    .send(html);
}

const invalidPage = (home: string) =>
  page({
    title: unsubscribeText.invalidTitle,
    home,
    children: h('p', null, unsubscribeText.invalidBody, ' ', h('a', { href: `mailto:${site.contactEmail}` }, site.contactEmail)),
  });

const unknownPage = (home: string) => page({ title: unsubscribeText.unknownTitle, home, children: h('p', null, unsubscribeText.unknownBody) });

const unavailablePage = (home: string) => page({ title: unsubscribeText.unavailableTitle, home, children: h('p', null, unsubscribeText.unavailableBody) });

const tokenOf = (req: Request): unknown => req.query.token;

export function unsubscribeRouter({ store, secret, previousSecrets = [], siteUrl, logger }: UnsubscribeOptions): Router {
  const router = express.Router();
  const home = `${siteUrl.replace(/\/+$/, '')}/`;
  // One-click posts a tiny form body; the token in the query string is what counts.
  const form = express.urlencoded({ limit: '1kb', extended: false, parameterLimit: 5 });

  router.get('/unsubscribe', async (req, res) => {
    const token = tokenOf(req);
    const id = verifyUnsubscribeToken(token, secret, previousSecrets);
    if (!id) return send(res, 400, invalidPage(home));
    try {
      const subscriber = await store.findSubscriber(id);
      if (!subscriber) return send(res, 200, unknownPage(home));
      if (!subscriber.active) {
        return send(
          res,
          200,
          page({
            home,
            title: unsubscribeText.alreadyTitle,
            children: [h('p', { key: 'body' }, unsubscribeText.alreadyBody(subscriber.email)), h('div', { key: 'form' }, resubscribeForm(subscriber.email))],
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
            h('p', { key: 'body' }, unsubscribeText.confirmBody(subscriber.email)),
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

  router.post('/unsubscribe', form, async (req, res) => {
    const id = verifyUnsubscribeToken(tokenOf(req), secret, previousSecrets);
    if (!id) return send(res, 400, invalidPage(home));
    try {
      const removed = await store.removeSubscriber(id, 'unsubscribed');
      const subscriber = removed ? await store.findSubscriber(id) : null;
      if (!subscriber) return send(res, 200, unknownPage(home));
      logger.info({ subscriber: id }, 'unsubscribed');
      return send(
        res,
        200,
        page({
          home,
          title: unsubscribeText.doneTitle,
          children: [h('p', { key: 'body' }, unsubscribeText.doneBody(subscriber.email)), h('div', { key: 'form' }, resubscribeForm(subscriber.email))],
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
