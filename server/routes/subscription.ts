// 'Your subscription': the page every e-mail's footer links to, with the unsubscribe link's signed
// token. It shows the address (masked) and its state and offers POST buttons (never a change on
// GET, since mail scanners open links). That token travels with every forwarded digest, so it only
// unsubscribes at once; download, delete and subscribe again first mail a fresh one-hour, one-use
// link to the address (server/link-tokens.ts, routes in subscription-link.ts).
import express, { type Request, type Response, type Router } from 'express';
import { createElement as h, type ReactNode } from 'react';
import { recapSummaries } from '../../content/index.ts';
import { site } from '../../content/site.ts';
import type { Logger } from '../logger.ts';
import type { SignupMode, SiteStore, SubscriberDetails, SubscriberStatus } from '../store/types.ts';
import type { SignupService } from '../signup.ts';
import type { SubscriberKeys } from '../subscriber-keys.ts';
import { verifyUnsubscribeToken } from '../unsubscribe-token.ts';
import { FRESH_LINK_MINUTES, freshLinkThrottleKey, maskEmail, newFreshLink, type LinkPurpose } from '../link-tokens.ts';
import { page } from '../small-page.ts';

export interface SubscriptionOptions {
  store: SiteStore;
  secret: string;
  previousSecrets?: readonly string[];
  siteUrl: string;
  keys: SubscriberKeys;
  signup: SignupService;
  /** SIGNUP_CONFIRMATION: in double mode "Subscribe again" makes the address pending and mails a confirmation. */
  mode: SignupMode;
  /** Told when a fresh link was queued, so it goes out now rather than at the next poll. */
  outbox: { wake(): void };
  logger: Logger;
  now?: () => Date;
}

const day = (date: Date) => date.toISOString().slice(0, 10);

export const subscriptionText = {
  title: 'Your subscription',
  // The address is shown masked (r•••@example.org): the footer link travels with forwarded mail.
  state: {
    active: (email: string) => `${email} is subscribed and gets the ${site.name} e-mail every Monday.`,
    pending: (email: string) => `${email} is waiting for its confirmation: press the button in the e-mail we sent, and the Monday e-mail starts.`,
    unsubscribed: (email: string, since: Date) => `${email} unsubscribed on ${day(since)} and gets no e-mail from us.`,
    bounced: (email: string, since: Date) => `Mail to ${email} bounced on ${day(since)}, so we stopped sending to it.`,
    complained: (email: string, since: Date) => `${email} reported our e-mail as spam on ${day(since)}, so we stopped sending to it.`,
  } satisfies Record<SubscriberStatus, (email: string, since: Date) => string>,
  unsubscribe: 'Unsubscribe',
  resubscribe: 'Subscribe again',
  download: 'Download my data',
  delete: 'Delete my data',
  deleteNote: 'Deleting removes your address, its history and the list of recaps we sent you. It cannot be undone.',
  linkNote: `Downloading, deleting and subscribing again first send a link to the address, which works once, for ${FRESH_LINK_MINUTES} minutes.`,
  unsubscribed: 'Done: you are unsubscribed.',
  resubscribed: 'Done: you are subscribed again.',
  confirmationSent: 'We sent you a link to confirm your address. The Monday e-mail starts once you click it.',
  linkSent: (masked: string) => `We sent a link to ${masked}. Open it within ${FRESH_LINK_MINUTES} minutes to go on; until then nothing has changed.`,
  linkRecentlySent: (masked: string) => `We recently sent links to ${masked}; please use the newest one. Nothing has changed.`,
  deletedTitle: 'Your data is deleted',
  deletedBody: (email: string) => `Nothing about ${email} is left on our list.`,
  deletedSuppressedBody:
    'Nothing readable about your address is left. Because mail to it had bounced or was reported as spam, we keep a one-way keyed fingerprint of it, so that no one can sign it up again without your confirmation.',
  expiredTitle: 'This link has expired',
  expiredBody: 'The address it was made for is no longer on our list: we keep nothing about it, and its links do nothing.',
  invalidTitle: 'This link is not valid',
  invalidBody: 'It may have been cut short or changed on its way here. Use the link at the bottom of one of our e-mails.',
  unavailableTitle: 'Please try again in a few minutes',
  unavailableBody: 'We could not reach our list just now, so nothing has changed yet.',
} as const;

const ACTIONS = ['unsubscribe', 'resubscribe', 'download', 'delete'] as const;
type Action = (typeof ACTIONS)[number];

/** Fresh links per subscriber per hour: enough for a person, too few to flood their inbox. */
const FRESH_LINKS_PER_HOUR = 5;

/** What this subscriber may do from here, by state. */
function actionsFor(status: SubscriberStatus): Action[] {
  const change: Action[] = status === 'active' ? ['unsubscribe'] : status === 'pending' ? ['unsubscribe', 'resubscribe'] : ['resubscribe'];
  return [...change, 'download', 'delete'];
}

/** The "download my data" file: everything the store keeps about the address. */
export function dataExport(details: SubscriberDetails) {
  const titles = new Map(recapSummaries.map((summary) => [summary.date, summary.headline]));
  const left = details.status === 'unsubscribed' || details.status === 'bounced' || details.status === 'complained';
  return {
    address: details.email,
    state: details.status,
    reason: left ? details.status : null,
    stateSince: details.statusChangedAt.toISOString(),
    firstSignupAt: details.createdAt.toISOString(),
    signup: { at: details.signedUpAt.toISOString(), page: details.source },
    confirmation: { at: details.confirmedAt?.toISOString() ?? null },
    consentRecord: {
      signedUpAt: details.signedUpAt.toISOString(),
      signupPage: details.source,
      signupNetworkAddressHash: details.signupNetworkHash,
      confirmedAt: details.confirmedAt?.toISOString() ?? null,
      confirmationNetworkAddressHash: details.confirmNetworkHash,
      note: 'Network addresses are kept only as keyed hashes (HMAC-SHA256), never as sent.',
    },
    leftAt: details.leftAt?.toISOString() ?? null,
    welcomeEmailSentAt: details.welcomedAt?.toISOString() ?? null,
    recapsSent: details.deliveries.map((d) => ({ recap: d.recapDate, title: titles.get(d.recapDate) ?? null, sentAt: d.sentAt.toISOString() })),
  };
}

export function send(res: Response, status: number, html: string) {
  // The token in the address is a credential: no caches, no index. The referrer keeps our own
  // origin only, so the buttons post with a real Origin header (no-referrer would make it `null`).
  res
    .status(status)
    .set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'same-origin', 'X-Robots-Tag': 'noindex' })
    .type('html')
    .send(html);
}

/** A page of these routes: each child in its own block. */
export function pageShower(home: string) {
  return (res: Response, status: number, title: string, children: ReactNode[]) =>
    send(res, status, page({ title, home, children: children.map((child, index) => h('div', { key: index }, child)) }));
}

export function subscriptionRouter(options: SubscriptionOptions): Router {
  const { store, secret, previousSecrets = [], siteUrl, logger } = options;
  const router = express.Router();
  const show = pageShower(`${siteUrl.replace(/\/+$/, '')}/`);
  const form = express.urlencoded({ limit: '1kb', extended: false, parameterLimit: 5 });
  const idOf = (req: Request) => verifyUnsubscribeToken(req.query.token, secret, previousSecrets);
  const act = subscriptionActions(options);

  function subscriptionPage(res: Response, token: string, details: SubscriberDetails, notice: string | null) {
    const action = `/subscription?token=${encodeURIComponent(token)}`;
    const button = (name: Action) =>
      h(
        'form',
        { key: name, method: 'post', action, style: { display: 'inline-block', margin: '0 .5rem .75rem 0' } },
        h('input', { type: 'hidden', name: 'action', value: name }),
        h('button', { type: 'submit', className: name !== 'unsubscribe' && name !== 'resubscribe' ? 'secondary' : undefined }, subscriptionText[name]),
      );
    const since = details.leftAt ?? details.statusChangedAt;
    show(res, 200, subscriptionText.title, [
      notice ? h('p', { role: 'status' }, h('strong', null, notice)) : null,
      h('p', null, subscriptionText.state[details.status](maskEmail(details.email), since)),
      actionsFor(details.status).map(button),
      h('p', { style: { fontSize: '.9rem' } }, subscriptionText.linkNote, ' ', subscriptionText.deleteNote),
    ]);
  }

  const invalid = (res: Response) => show(res, 400, subscriptionText.invalidTitle, [h('p', null, subscriptionText.invalidBody)]);
  const unavailable = (res: Response, error: unknown) => {
    logger.error({ err: error }, 'subscription page could not reach the store');
    show(res, 503, subscriptionText.unavailableTitle, [h('p', null, subscriptionText.unavailableBody)]);
  };

  router.get('/subscription', async (req, res) => {
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

  router.post('/subscription', form, async (req, res) => {
    const id = idOf(req);
    if (!id) return invalid(res);
    const action = (req.body as { action?: unknown } | undefined)?.action;
    if (!ACTIONS.includes(action as Action)) {
      return show(res, 400, subscriptionText.title, [h('p', null, `Choose one of the buttons: ${ACTIONS.map((a) => subscriptionText[a]).join(', ')}.`)]);
    }
    try {
      const details = await store.subscriberDetails(id);
      if (!details) return expired(show, res);
      const notice = await act(action as Action, details, req);
      const after = await store.subscriberDetails(id);
      return after ? subscriptionPage(res, String(req.query.token), after, notice) : expired(show, res);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  return router;
}

/** A link of ours whose subscriber is gone (deleted, or pruned unconfirmed): it does nothing. */
export function expired(show: ReturnType<typeof pageShower>, res: Response) {
  show(res, 410, subscriptionText.expiredTitle, [h('p', null, subscriptionText.expiredBody)]);
}

/**
 * The buttons of the footer link's page. Unsubscribing acts at once; downloading, deleting and
 * (single mode) subscribing again only mail a fresh link to the address; in double mode, and for
 * a bounced or complained address in either, subscribing again mails a confirmation instead.
 * Returns the notice for the page.
 */
function subscriptionActions({ store, secret, signup, mode, outbox, logger, now = () => new Date() }: SubscriptionOptions) {
  async function sendLink(purpose: LinkPurpose, details: SubscriberDetails): Promise<string> {
    const masked = maskEmail(details.email);
    const counted = await store.hitRateLimit(freshLinkThrottleKey(details.id, secret), 1, 60 * 60 * 1000, false);
    if (counted.points > FRESH_LINKS_PER_HOUR) return subscriptionText.linkRecentlySent(masked);
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
        // Double mode: back to pending, with the confirmation e-mail (throttled by the database).
        if (mode === 'double' && (details.status === 'unsubscribed' || details.status === 'pending')) {
          await signup.signUp(details.email, details.source ?? '/', req.ip);
          return subscriptionText.confirmationSent;
        }
        // Bounced or complained: only the owner's confirmation brings it back, in either mode.
        if (details.status === 'bounced' || details.status === 'complained') {
          await signup.resubscribe(details, req.ip);
          return subscriptionText.confirmationSent;
        }
        return sendLink('resubscribe', details);
    }
  };
}
