// 'Your subscription': the page every e-mail's footer links to, with the unsubscribe link's signed
// token. It shows the address (masked) and its state and offers POST buttons (never a change on
// GET, since mail scanners open links). That token travels with every forwarded digest, so it only
// unsubscribes at once; download, delete and subscribe again (in either mode) first mail a fresh
// one-hour, one-use link to the address (server/subscribers/link-tokens.ts, routes in
// subscription-link.ts).
import express, { type Request, type Response, type Router } from 'express';
import { createElement as h } from 'react';
import type { SubscriberDetails, SubscriberStatus } from '../../store/types.ts';
import { verifyUnsubscribeToken } from '../signed-links.ts';
import { freshLinkThrottleKey, maskEmail, newFreshLink, type LinkPurpose } from '../link-tokens.ts';
import { expired, pageShower, subscriptionText, type SubscriptionOptions } from '../subscription-pages.ts';
import { noReferrer } from '../../http/small-page.ts';
import { referralText } from '../../../content/referrals.ts';
import { shareLinkPath } from '../share-codes.ts';

const ACTIONS = ['unsubscribe', 'resubscribe', 'download', 'delete'] as const;
type Action = (typeof ACTIONS)[number];
/**
 * Replacing the share link acts at once, unlike the buttons that mail a link first: the share link
 * is public by nature (its owner posts it), a new one exposes nothing and changes no consent, and
 * the old one still leads to the site.
 */
const REPLACE_SHARE = 'replace-share';
const BUTTON_NAMES = [...ACTIONS.map((a) => subscriptionText[a]), referralText.replace];

// A footer link travels with every forwarded digest, so whoever holds it may have one link of each
// purpose mailed to the address an hour, and a few a week in all: enough for the owner, too few to
// make the address a target.
const LINKS_PER_PURPOSE_PER_HOUR = 1;
const LINKS_PER_WEEK = 5;
const HOUR_MS = 60 * 60 * 1000;
const WEEK_MS = 7 * 24 * HOUR_MS;

/** What this subscriber may do from here, by state. */
function actionsFor(status: SubscriberStatus): Action[] {
  const change: Action[] = status === 'active' ? ['unsubscribe'] : status === 'pending' ? ['unsubscribe', 'resubscribe'] : ['resubscribe'];
  return [...change, 'download', 'delete'];
}


export function subscriptionRouter(options: SubscriptionOptions): Router {
  const { store, secret, previousSecrets = [], siteUrl, logger } = options;
  const router = express.Router();
  const show = pageShower(`${siteUrl.replace(/\/+$/, '')}/`);
  const form = express.urlencoded({ limit: '1kb', extended: false, parameterLimit: 5 });
  const idOf = (req: Request) => verifyUnsubscribeToken(req.query.token, secret, previousSecrets);
  const act = subscriptionActions(options);

  const home = siteUrl.replace(/\/+$/, '');

  function subscriptionPage(res: Response, token: string, details: SubscriberDetails, notice: string | null) {
    const action = `/subscription?token=${encodeURIComponent(token)}`;
    const button = (name: Action | typeof REPLACE_SHARE, label: string) =>
      h(
        'form',
        { key: name, method: 'post', action, style: { display: 'inline-block', margin: '0 .5rem .75rem 0' } },
        h('input', { type: 'hidden', name: 'action', value: name }),
        h('button', { type: 'submit', className: name !== 'unsubscribe' && name !== 'resubscribe' ? 'secondary' : undefined }, label),
      );
    const since = details.leftAt ?? details.statusChangedAt;
    const shareUrl = `${home}${shareLinkPath(details.shareCode)}`;
    show(res, 200, subscriptionText.title, [
      notice ? h('p', { role: 'status' }, h('strong', null, notice)) : null,
      h('p', null, subscriptionText.state[details.status](maskEmail(details.email), since)),
      actionsFor(details.status).map((name) => button(name, subscriptionText[name])),
      h('p', { style: { fontSize: '.9rem' } }, subscriptionText.linkNote, ' ', subscriptionText.deleteNote),
      h('h2', null, referralText.pageHeading),
      h('p', null, referralText.pageIntro),
      h('p', null, h('a', { href: shareUrl, 'data-share-link': '' }, shareUrl)),
      h('p', { 'data-referrals': details.referrals }, referralText.pageCount(details.referrals)),
      button(REPLACE_SHARE, referralText.replace),
      h('p', { style: { fontSize: '.9rem' } }, referralText.replaceNote),
    ]);
  }

  async function replaceShare(details: SubscriberDetails): Promise<string> {
    const code = await store.replaceShareCode(details.id);
    if (code === null) return subscriptionText.expiredBody;
    logger.info({ subscriber: details.id }, 'share link replaced');
    return referralText.replaced;
  }

  const invalid = (res: Response) => show(res, 400, subscriptionText.invalidTitle, [h('p', null, subscriptionText.invalidBody)]);
  const unavailable = (res: Response, error: unknown) => {
    logger.error({ err: error }, 'subscription page could not reach the store');
    show(res, 503, subscriptionText.unavailableTitle, [h('p', null, subscriptionText.unavailableBody)]);
  };

  router.get('/subscription', noReferrer, async (req, res) => {
    const id = idOf(req);
    if (!id) return invalid(res);
    try {
      const details = await store.subscriberDetails(id);
      if (!details) return expired(show, res);
      return subscriptionPage(res, String(req.query.token), details, null);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  router.post('/subscription', noReferrer, form, async (req, res) => {
    const id = idOf(req);
    if (!id) return invalid(res);
    const action = (req.body as { action?: unknown } | undefined)?.action;
    if (!ACTIONS.includes(action as Action) && action !== REPLACE_SHARE) {
      return show(res, 400, subscriptionText.title, [h('p', null, `Choose one of the buttons: ${BUTTON_NAMES.join(', ')}.`)]);
    }
    try {
      const details = await store.subscriberDetails(id);
      if (!details) return expired(show, res);
      const notice = action === REPLACE_SHARE ? await replaceShare(details) : await act(action as Action, details, req);
      const after = await store.subscriberDetails(id);
      return after ? subscriptionPage(res, String(req.query.token), after, notice) : expired(show, res);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  return router;
}


/**
 * The buttons of the footer link's page (and "Subscribe again" on the unsubscribe page, which posts
 * here). Whoever presses them may hold a forwarded digest, so only unsubscribing acts at once;
 * downloading, deleting and subscribing again (in either mode) mail a fresh link to the address
 * and change nothing, the row's network hash included: consent changes only by an act from the
 * inbox. A bounced or complained address is mailed a confirmation instead (signup.resubscribe,
 * throttled by the row). Every notice says what was sent: none claims an e-mail that did not go.
 * Returns the notice for the page.
 */
function subscriptionActions({ store, secret, signup, outbox, logger, now = () => new Date() }: SubscriptionOptions) {
  /** Whether this subscriber may be mailed one more link of this purpose now (counted when it may). */
  async function mayMail(details: SubscriberDetails, purpose: LinkPurpose): Promise<boolean> {
    const key = freshLinkThrottleKey(details.id, secret);
    const hourly = await store.hitRateLimit(`${key}:${purpose}`, 1, HOUR_MS, false);
    if (hourly.points > LINKS_PER_PURPOSE_PER_HOUR) return false;
    const weekly = await store.hitRateLimit(`${key}:week`, 1, WEEK_MS, false);
    return weekly.points <= LINKS_PER_WEEK;
  }

  async function sendLink(purpose: LinkPurpose, details: SubscriberDetails): Promise<string> {
    const masked = maskEmail(details.email);
    if (!(await mayMail(details, purpose))) return subscriptionText.linkRecentlySent(masked);
    const { nonce, expiresAt } = newFreshLink(now());
    // Queued in the outbox, made for the subscriber's link version at this moment.
    if (!(await store.requestLink(details.id, purpose, nonce, expiresAt))) return subscriptionText.expiredBody;
    outbox.wake();
    logger.info({ subscriber: details.id, purpose }, 'fresh link queued');
    return subscriptionText.linkSent(masked);
  }

  return async (action: Action, details: SubscriberDetails, req: Request): Promise<string> => {
    switch (action) {
      case 'unsubscribe':
        await store.removeSubscriber(details.id, 'unsubscribed');
        return subscriptionText.unsubscribed;
      case 'download':
      case 'delete':
        return sendLink(action, details);
      case 'resubscribe':
        if (details.status === 'active') return subscriptionText.resubscribed;
        // Bounced or complained: only the owner's confirmation brings it back, in either mode.
        if (details.status === 'bounced' || details.status === 'complained') {
          const outcome = await signup.resubscribe(details, req.ip);
          if (outcome === 'nothing_sent') return subscriptionText.confirmationThrottled(maskEmail(details.email));
          return outcome === 'confirmation_sent' ? subscriptionText.confirmationSent : subscriptionText.resubscribed;
        }
        return sendLink('resubscribe', details);
    }
  };
}
