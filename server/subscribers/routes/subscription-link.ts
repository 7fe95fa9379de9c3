// The fresh links that "Download my data", "Delete my data" and (single mode) "Subscribe again"
// mail to the address: GET /subscription/link?token= shows one button and changes nothing (mail
// scanners open links); its POST uses the link (the database records it, so it acts once) and acts.
// A link that is expired, used, made before the address changed state, or whose subscriber is
// gone answers 410 with a page that says which; a link that is not ours, 400.
import express, { type Request, type Response, type Router } from 'express';
import { createElement as h } from 'react';
import { site } from '../../../content/site.ts';
import { maskEmail, verifyFreshLinkToken, FRESH_LINK_MINUTES, type FreshLink, type LinkPurpose } from '../link-tokens.ts';
import type { LinkState } from '../../store/subscriber-links.ts';
import { dataExport, expired, pageShower, subscriptionText, type SubscriptionOptions } from '../subscription-pages.ts';
import { noReferrer } from '../../http/small-page.ts';

export const freshLinkText = {
  title: { download: 'Download your data', delete: 'Delete your data', resubscribe: 'Subscribe again' } satisfies Record<LinkPurpose, string>,
  ask: {
    download: (masked: string) => `Press the button to download everything we keep about ${masked}.`,
    delete: (masked: string) => `Press the button to delete everything we keep about ${masked}. It cannot be undone.`,
    resubscribe: (masked: string) => `Press the button to start the ${site.name} Monday e-mail to ${masked} again.`,
  } satisfies Record<LinkPurpose, (masked: string) => string>,
  button: { download: 'Download my data', delete: 'Delete my data', resubscribe: 'Subscribe me again' } satisfies Record<LinkPurpose, string>,
  resubscribedTitle: 'You are subscribed again',
  resubscribedBody: (masked: string) => `${masked} will get the ${site.name} e-mail every Monday.`,
  notAgainBody: 'This address cannot be subscribed again from here. Sign up on our site and confirm the e-mail we send.',
  usedTitle: 'This link was already used',
  usedBody: 'Each link we e-mail works once. Open the link at the bottom of one of our e-mails to ask for a new one.',
  expiredTitle: 'This link has expired',
  expiredBody: `Links we e-mail work for ${FRESH_LINK_MINUTES} minutes. Open the link at the bottom of one of our e-mails to ask for a new one.`,
  revokedBody: 'The subscription changed since this link was made, so it no longer works. Open the link at the bottom of one of our e-mails to ask for a new one.',
} as const;

export function subscriptionLinkRouter(options: SubscriptionOptions): Router {
  const { store, secret, previousSecrets = [], siteUrl, keys, signup, logger, now = () => new Date() } = options;
  const router = express.Router();
  const show = pageShower(`${siteUrl.replace(/\/+$/, '')}/`);
  const form = express.urlencoded({ limit: '1kb', extended: false, parameterLimit: 5 });

  /** The link in the request, or null once it has answered for a link that is not valid or expired. */
  function linkOf(req: Request, res: Response): FreshLink | null {
    const checked = verifyFreshLinkToken(req.query.token, now(), secret, previousSecrets);
    if (checked.ok) return checked.link;
    if (checked.reason === 'expired') show(res, 410, freshLinkText.expiredTitle, [h('p', null, freshLinkText.expiredBody)]);
    else show(res, 400, subscriptionText.invalidTitle, [h('p', null, subscriptionText.invalidBody)]);
    return null;
  }

  function refused(res: Response, state: Exclude<LinkState, 'ok'>) {
    if (state === 'gone') return expired(show, res);
    if (state === 'used') return show(res, 410, freshLinkText.usedTitle, [h('p', null, freshLinkText.usedBody)]);
    return show(res, 410, freshLinkText.expiredTitle, [h('p', null, freshLinkText.revokedBody)]);
  }

  const unavailable = (res: Response, error: unknown) => {
    logger.error({ err: error }, 'fresh link could not reach the store');
    show(res, 503, subscriptionText.unavailableTitle, [h('p', null, subscriptionText.unavailableBody)]);
  };

  router.get('/subscription/link', noReferrer, async (req, res) => {
    const link = linkOf(req, res);
    if (!link) return;
    try {
      const state = await store.linkState(link);
      const target = state === 'ok' ? await store.linkTarget(link.subscriberId) : null;
      if (state !== 'ok' || !target) return refused(res, state === 'ok' ? 'gone' : state);
      const action = `/subscription/link?token=${encodeURIComponent(String(req.query.token))}`;
      return show(res, 200, freshLinkText.title[link.purpose], [
        h('p', null, freshLinkText.ask[link.purpose](maskEmail(target.email))),
        h('form', { method: 'post', action }, h('button', { type: 'submit' }, freshLinkText.button[link.purpose])),
      ]);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  router.post('/subscription/link', noReferrer, form, async (req, res) => {
    const link = linkOf(req, res);
    if (!link) return;
    try {
      const target = await store.linkTarget(link.subscriberId);
      if (!target) return refused(res, 'gone');
      if (link.purpose === 'delete') {
        const [hash] = await keys.addressHashes(target.email);
        const deleted = await store.deleteSubscriberByLink(link, hash!);
        if (deleted.outcome !== 'ok') return refused(res, deleted.outcome);
        logger.info({ had: deleted.status }, 'subscriber data deleted at their request');
        const suppressed = deleted.status === 'bounced' || deleted.status === 'complained';
        return show(res, 200, subscriptionText.deletedTitle, [
          h('p', null, suppressed ? subscriptionText.deletedSuppressedBody : subscriptionText.deletedBody(maskEmail(target.email))),
        ]);
      }
      const used = await store.useLink(link);
      if (used !== 'ok') return refused(res, used);
      if (link.purpose === 'download') return download(res, link.subscriberId);
      return resubscribe(req, res, link.subscriberId);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  async function download(res: Response, id: string) {
    const details = await store.subscriberDetails(id);
    if (!details) return refused(res, 'gone');
    res
      .status(200)
      .set({ 'Cache-Control': 'no-store', 'Content-Disposition': `attachment; filename="${site.name.toLowerCase().replace(/\s+/g, '-')}-my-data.json"` })
      .type('application/json')
      .send(`${JSON.stringify(dataExport(details), null, 2)}\n`);
  }

  async function resubscribe(req: Request, res: Response, id: string) {
    const details = await store.subscriberDetails(id);
    if (!details) return refused(res, 'gone');
    // From unsubscribed or pending, active at once (the welcome, when on, is queued with it).
    if ((await signup.resubscribe(details, req.ip)) !== 'resubscribed') {
      return show(res, 409, freshLinkText.title.resubscribe, [h('p', null, freshLinkText.notAgainBody)]);
    }
    return show(res, 200, freshLinkText.resubscribedTitle, [h('p', null, freshLinkText.resubscribedBody(maskEmail(details.email)))]);
  }

  return router;
}
