// The e-mails the outbox delivers besides the digest: the double opt-in confirmation, the optional
// welcome, a referrer's thanks at a milestone, fresh one-use links (link-tokens.ts) and the
// operator's notices. Each is composed from its outbox row alone, the same way on every attempt
// (the confirmation link is dated by the row, not by the clock), so a retry under the same
// idempotency key carries the same body and the provider never sends it twice.
import { createFreshLinkToken, FRESH_LINK_MINUTES, freshLinkUrlFor, LINK_PURPOSES, type LinkPurpose } from '../subscribers/link-tokens.ts';
import { recaps, type RecapSummary } from '../../content/index.ts';
import { isPublic } from '../../content/publication.ts';
import type { OutgoingMessage } from './types.ts';
import { referralText } from '../../content/referrals.ts';
import type { OutboxMessage } from '../store/mail-outbox.ts';
import { CONFIRM_TOKEN_DAYS, confirmUrlFor, createConfirmToken, createUnsubscribeToken, subscriptionUrlFor, unsubscribeUrlFor } from '../subscribers/signed-links.ts';

export interface SubscriberMailOptions {
  siteUrl: string;
  secret: string;
  /** The newest week public at a moment (the message's queueing), which the welcome links to. */
  newestRecap?: (at: Date) => Pick<RecapSummary, 'path' | 'headline'> | undefined;
}

let loadedTemplates: Promise<typeof import('./subscriber-mail-templates.ts')> | undefined;
/** The templates, loaded by the first message composed (server/mail/subscriber-mail-templates.ts). */
const templates = () => (loadedTemplates ??= import('./subscriber-mail-templates.ts'));

/** recaps is newest first; a week that is not public yet is not out. */
const newestPublic = (at: Date) => recaps.find((recap) => isPublic(recap, { now: at, timeZone: 'UTC' }));

/** What a message comes to: the e-mail to send, or why it is no longer due. */
export type Composed = { kind: 'send'; message: OutgoingMessage } | { kind: 'cancel'; reason: string };

/** Composes an outbox row into the message to send (`from` is the mailer's sender). */
export type ComposeMail = (row: OutboxMessage, from: string) => Promise<Composed>;

export function subscriberMail({ siteUrl, secret, newestRecap = newestPublic }: SubscriberMailOptions): ComposeMail {
  const home = siteUrl.replace(/\/+$/, '');

  async function confirmation(row: OutboxMessage, email: string, from: string): Promise<OutgoingMessage> {
    const { ConfirmEmail, confirmEmailText, renderTransactional } = await templates();
    // The link version the row had when the confirmation was queued; rows queued before versions have none.
    const version = typeof row.payload.version === 'number' ? row.payload.version : undefined;
    const confirmUrl = confirmUrlFor(home, createConfirmToken(row.subscriberId!, row.createdAt, secret, version));
    const rendered = await renderTransactional(ConfirmEmail, { confirmUrl, siteUrl: `${home}/`, validDays: CONFIRM_TOKEN_DAYS }, confirmEmailText.subject);
    return { to: email, from, ...rendered, headers: {}, tags: { kind: 'confirmation' } };
  }

  async function welcome(row: OutboxMessage, email: string, from: string): Promise<OutgoingMessage> {
    const { WelcomeEmail, welcomeEmailText, renderTransactional } = await templates();
    const token = createUnsubscribeToken(row.subscriberId!, secret);
    const unsubscribeUrl = unsubscribeUrlFor(home, token);
    // Public when the welcome was queued: every try composes the same message.
    const newest = newestRecap(row.createdAt);
    const rendered = await renderTransactional(
      WelcomeEmail,
      {
        siteUrl: `${home}/`,
        newestRecapUrl: newest ? `${home}${newest.path}` : `${home}/archive`,
        newestRecapTitle: newest?.headline ?? null,
        subscriptionUrl: subscriptionUrlFor(home, token),
        unsubscribeUrl,
      },
      welcomeEmailText.subject,
    );
    return {
      to: email,
      from,
      ...rendered,
      headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      tags: { kind: 'welcome' },
    };
  }

  /** The thanks of a REFERRAL_MILESTONES milestone: the count is the one the row was queued with. */
  async function referralThanks(row: OutboxMessage, email: string, from: string): Promise<OutgoingMessage | null> {
    const count = row.payload.count;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) return null;
    const { ReferralThanksEmail, renderTransactional } = await templates();
    const token = createUnsubscribeToken(row.subscriberId!, secret);
    const unsubscribeUrl = unsubscribeUrlFor(home, token);
    const rendered = await renderTransactional(
      ReferralThanksEmail,
      { siteUrl: `${home}/`, count, subscriptionUrl: subscriptionUrlFor(home, token), unsubscribeUrl },
      referralText.thanks.subject(count),
    );
    return {
      to: email,
      from,
      ...rendered,
      headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      tags: { kind: 'referral-thanks' },
    };
  }

  /** A fresh link from its row's payload (purpose, version, nonce, expiry); null when the payload is not one. */
  async function freshLink(row: OutboxMessage, email: string, from: string): Promise<OutgoingMessage | null> {
    const { purpose, version, nonce, expires_at: expires } = row.payload as { purpose?: unknown; version?: unknown; nonce?: unknown; expires_at?: unknown };
    if (!LINK_PURPOSES.includes(purpose as LinkPurpose) || typeof version !== 'number' || typeof nonce !== 'string' || typeof expires !== 'string') return null;
    const link = { purpose: purpose as LinkPurpose, subscriberId: row.subscriberId!, version, nonce, expiresAt: new Date(expires) };
    const { FreshLinkEmail, freshLinkEmailText, renderTransactional } = await templates();
    const linkUrl = freshLinkUrlFor(home, createFreshLinkToken(link, secret));
    const rendered = await renderTransactional(FreshLinkEmail, { purpose: link.purpose, linkUrl, siteUrl: `${home}/`, validMinutes: FRESH_LINK_MINUTES }, freshLinkEmailText.subject[link.purpose]);
    return { to: email, from, ...rendered, headers: {}, tags: { kind: `link-${link.purpose}` } };
  }

  return async (row, from) => {
    if (row.kind === 'operator') {
      const { to, subject, text } = row.payload as { to?: unknown; subject?: unknown; text?: unknown };
      if (typeof to !== 'string' || typeof subject !== 'string' || typeof text !== 'string') return { kind: 'cancel', reason: 'operator notice without to, subject and text' };
      return { kind: 'send', message: { to, from, subject, text, html: operatorHtml(text), headers: {}, tags: { kind: 'operator' } } };
    }
    if (row.email === null || row.subscriberId === null) return { kind: 'cancel', reason: 'the subscriber was deleted before it went out' };
    if ((row.kind === 'welcome' || row.kind === 'referral_thanks') && row.status !== 'active') return { kind: 'cancel', reason: `the subscriber is ${row.status ?? 'gone'}, not active` };
    if (row.kind === 'referral_thanks') {
      const message = await referralThanks(row, row.email, from);
      return message ? { kind: 'send', message } : { kind: 'cancel', reason: 'a referral thanks without its count' };
    }
    if (row.kind === 'link') {
      const message = await freshLink(row, row.email, from);
      if (!message) return { kind: 'cancel', reason: 'a fresh link without purpose, version, nonce and expiry' };
      // A link whose hour passed while it waited would only say it expired.
      if (Date.parse(String(row.payload.expires_at)) <= Date.now()) return { kind: 'cancel', reason: 'the link expired before it went out' };
      return { kind: 'send', message };
    }
    return { kind: 'send', message: row.kind === 'confirm' ? await confirmation(row, row.email, from) : await welcome(row, row.email, from) };
  };
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An operator notice is plain text; the HTML part is the same text, preformatted. */
function operatorHtml(text: string): string {
  return `<!doctype html><html><body><pre style="font:14px/1.5 ui-monospace,monospace;white-space:pre-wrap">${escapeHtml(text)}</pre></body></html>`;
}
