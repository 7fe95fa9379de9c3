// The pages behind an e-mail's footer link and the fresh links it mails: their texts, the "download
// my data" file, and how such a page is sent (no caches, no index). Shared by the two routers in
// server/subscribers/routes/subscription.ts and subscription-link.ts, which do not import each other.
import type { Response } from 'express';
import { createElement as h, type ReactNode } from 'react';
import { recapSummaries } from '../../content/index.ts';
import { site } from '../../content/site.ts';
import type { Logger } from '../http/logger.ts';
import type { SignupMode, SiteStore, SubscriberDetails, SubscriberStatus } from '../store/types.ts';
import type { SignupService } from './signup.ts';
import type { SubscriberKeys } from './subscriber-keys.ts';
import { FRESH_LINK_MINUTES } from './link-tokens.ts';
import { page, send } from '../http/small-page.ts';

export interface SubscriptionOptions {
  store: SiteStore;
  secret: string;
  previousSecrets?: readonly string[];
  siteUrl: string;
  keys: SubscriberKeys;
  signup: SignupService;
  /** SIGNUP_CONFIRMATION. */
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
  // A confirmation mailed earlier may no longer work (one made before an unsubscribe is refused),
  // so this does not send the reader back to it.
  confirmationThrottled: (masked: string) =>
    `We sent a confirmation to ${masked} recently, and to protect that inbox we send no more for a while, so none went now. Nothing has changed; please try again later.`,
  nothingChanged: 'Nothing has changed.',
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
    // Where the visit that first brought the address came from, as the site carried it.
    origin: {
      landingPage: details.origin.page ?? null,
      ref: details.origin.ref ?? null,
      utmSource: details.origin.utm_source ?? null,
      utmMedium: details.origin.utm_medium ?? null,
      utmCampaign: details.origin.utm_campaign ?? null,
      throughAReadersShareLink: details.viaShare,
    },
    firstActiveAt: details.firstActiveAt?.toISOString() ?? null,
    shareLink: { code: details.shareCode, readersJoinedThroughIt: details.referrals },
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
    // Every other spelling of the mailbox that was once a row of its own, as it was kept.
    otherSpellings: details.mergedSpellings.map((spelling) => ({
      address: spelling.email,
      firstSignupAt: spelling.createdAt?.toISOString() ?? null,
      confirmedAt: spelling.confirmedAt?.toISOString() ?? null,
      leftAt: spelling.leftAt?.toISOString() ?? null,
      reason: spelling.leftReason,
      signupNetworkAddressHash: spelling.signupNetworkHash,
      confirmationNetworkAddressHash: spelling.confirmNetworkHash,
      mergedIntoThisAddressAt: spelling.mergedAt.toISOString(),
      recapsSent: spelling.deliveries.map((d) => ({ recap: d.recapDate, title: titles.get(d.recapDate) ?? null, sentAt: d.sentAt?.toISOString() ?? null })),
    })),
  };
}

/** A page of these routes: each child in its own block. */
export function pageShower(home: string) {
  return (res: Response, status: number, title: string, children: ReactNode[]) =>
    send(res, status, page({ title, home, children: children.map((child, index) => h('div', { key: index }, child)) }));
}

/** A link of ours whose subscriber is gone (deleted, or pruned unconfirmed): it does nothing. */
export function expired(show: ReturnType<typeof pageShower>, res: Response) {
  show(res, 410, subscriptionText.expiredTitle, [h('p', null, subscriptionText.expiredBody)]);
}
