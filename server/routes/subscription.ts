// 'Your subscription': the page every e-mail's footer links to, with the unsubscribe link's signed
// token. It shows the address's state and offers four POST buttons (never a change on GET, since
// mail scanners open links): unsubscribe, subscribe again, download my data, delete my data.
import express, { type Request, type Response, type Router } from 'express';
import { createElement as h, type ReactNode } from 'react';
import { recapSummaries } from '../../content/index.ts';
import { site } from '../../content/site.ts';
import type { Logger } from '../logger.ts';
import type { SiteStore, SubscriberDetails, SubscriberStatus } from '../store/types.ts';
import type { SignupService } from '../signup.ts';
import type { SubscriberKeys } from '../subscriber-keys.ts';
import { verifyUnsubscribeToken } from '../unsubscribe-token.ts';
import { page } from '../small-page.ts';

export interface SubscriptionOptions {
  store: SiteStore;
  secret: string;
  previousSecrets?: readonly string[];
  siteUrl: string;
  keys: SubscriberKeys;
  signup: SignupService;
  logger: Logger;
}

const day = (date: Date) => date.toISOString().slice(0, 10);

export const subscriptionText = {
  title: 'Your subscription',
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
  unsubscribed: 'Done: you are unsubscribed.',
  resubscribed: 'Done: you are subscribed again.',
  confirmationSent: 'We sent you a link to confirm your address. The Monday e-mail starts once you click it.',
  deletedTitle: 'Your data is deleted',
  deletedBody: (email: string) => `Nothing about ${email} is left on our list.`,
  deletedSuppressedBody:
    'Nothing readable about your address is left. Because mail to it had bounced or was reported as spam, we keep a one-way keyed fingerprint of it, so that no one can sign it up again without your confirmation.',
  unknownTitle: 'Nothing stored',
  unknownBody: 'The address this link was made for is not on our list: we keep nothing about it.',
  invalidTitle: 'This link is not valid',
  invalidBody: 'It may have been cut short or changed on its way here. Use the link at the bottom of one of our e-mails.',
  unavailableTitle: 'Please try again in a few minutes',
  unavailableBody: 'We could not reach our list just now, so nothing has changed yet.',
} as const;

const ACTIONS = ['unsubscribe', 'resubscribe', 'download', 'delete'] as const;
type Action = (typeof ACTIONS)[number];

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

function send(res: Response, status: number, html: string) {
  // The token in the address is a credential: no caches, no index. The referrer keeps our own
  // origin only, so the buttons post with a real Origin header (no-referrer would make it `null`).
  res
    .status(status)
    .set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'same-origin', 'X-Robots-Tag': 'noindex' })
    .type('html')
    .send(html);
}

export function subscriptionRouter(options: SubscriptionOptions): Router {
  const { store, secret, previousSecrets = [], siteUrl, keys, signup, logger } = options;
  const router = express.Router();
  const home = `${siteUrl.replace(/\/+$/, '')}/`;
  const form = express.urlencoded({ limit: '1kb', extended: false, parameterLimit: 5 });
  const show = (res: Response, status: number, title: string, children: ReactNode[]) =>
    send(res, status, page({ title, home, children: children.map((child, index) => h('div', { key: index }, child)) }));
  const idOf = (req: Request) => verifyUnsubscribeToken(req.query.token, secret, previousSecrets);

  function subscriptionPage(res: Response, token: string, details: SubscriberDetails, notice: string | null) {
    const action = `/subscription?token=${encodeURIComponent(token)}`;
    const button = (name: Action, secondary: boolean) =>
      h(
        'form',
        { method: 'post', action, style: { display: 'inline-block', margin: '0 .5rem .75rem 0' } },
        h('input', { type: 'hidden', name: 'action', value: name }),
        h('button', { type: 'submit', className: secondary ? 'secondary' : undefined }, subscriptionText[name]),
      );
    const since = details.leftAt ?? details.statusChangedAt;
    show(res, 200, subscriptionText.title, [
      notice ? h('p', { role: 'status' }, h('strong', null, notice)) : null,
      h('p', null, subscriptionText.state[details.status](details.email, since)),
      h(
        'div',
        null,
        actionsFor(details.status).map((name) => h('span', { key: name }, button(name, name !== 'unsubscribe' && name !== 'resubscribe'))),
      ),
      h('p', { style: { fontSize: '.9rem' } }, subscriptionText.deleteNote),
    ]);
  }

  const invalid = (res: Response) => show(res, 400, subscriptionText.invalidTitle, [h('p', null, subscriptionText.invalidBody)]);
  const unknown = (res: Response) => show(res, 200, subscriptionText.unknownTitle, [h('p', null, subscriptionText.unknownBody)]);
  const unavailable = (res: Response, error: unknown) => {
    logger.error({ err: error }, 'subscription page could not reach the store');
    show(res, 503, subscriptionText.unavailableTitle, [h('p', null, subscriptionText.unavailableBody)]);
  };

  router.get('/subscription', async (req, res) => {
    const id = idOf(req);
    if (!id) return invalid(res);
    try {
      const details = await store.subscriberDetails(id);
      if (!details) return unknown(res);
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
    const token = String(req.query.token);
    try {
      const details = await store.subscriberDetails(id);
      if (!details) return unknown(res);
      const notice = await act(action as Action, details, req, res);
      if (notice === null) return;
      const after = await store.subscriberDetails(id);
      return after ? subscriptionPage(res, token, after, notice) : unknown(res);
    } catch (error) {
      return unavailable(res, error);
    }
  });

  /** Carries out one button; returns the notice for the page, or null when it answered itself. */
  async function act(action: Action, details: SubscriberDetails, req: Request, res: Response): Promise<string | null> {
    switch (action) {
      case 'download':
        res
          .status(200)
          .set({ 'Cache-Control': 'no-store', 'Content-Disposition': `attachment; filename="${site.name.toLowerCase().replace(/\s+/g, '-')}-my-data.json"` })
          .type('application/json')
          .send(`${JSON.stringify(dataExport(details), null, 2)}\n`);
        return null;
      case 'delete': {
        const [hash] = await keys.addressHashes(details.email);
        const had = await store.deleteSubscriber(details.id, hash!);
        logger.info({ subscriber: details.id, had }, 'subscriber data deleted at their request');
        const suppressed = had === 'bounced' || had === 'complained';
        show(res, 200, subscriptionText.deletedTitle, [h('p', null, suppressed ? subscriptionText.deletedSuppressedBody : subscriptionText.deletedBody(details.email))]);
        return null;
      }
      case 'unsubscribe':
        await store.removeSubscriber(details.id, 'unsubscribed');
        return subscriptionText.unsubscribed;
      case 'resubscribe':
        return resubscribe(details, req);
    }
  }

  async function resubscribe(details: SubscriberDetails, req: Request): Promise<string> {
    const done = await signup.resubscribe(details, req.ip);
    return done === 'resubscribed' ? subscriptionText.resubscribed : subscriptionText.confirmationSent;
  }

  return router;
}
