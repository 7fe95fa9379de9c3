// The e-mails a signup itself triggers: the double opt-in confirmation and the optional welcome.
// They go through the same Mailer as the digest (so locally they land in the outbox), one at a
// time, right after the database decided they are due (the throttle and "once ever" are claimed
// there, so two replicas or a bot cannot make one address receive more).
import { ConfirmEmail, confirmEmailText } from '../emails/ConfirmEmail.tsx';
import { renderTransactional } from '../emails/render-transactional.ts';
import { WelcomeEmail, welcomeEmailText } from '../emails/WelcomeEmail.tsx';
import { recaps, type RecapSummary } from '../content/index.ts';
import { isPublic } from '../content/publication.ts';
import type { Mailer, MessageOutcome } from './mail/types.ts';
import { CONFIRM_TOKEN_DAYS, confirmUrlFor, createConfirmToken, createUnsubscribeToken, subscriptionUrlFor, unsubscribeUrlFor } from './unsubscribe-token.ts';

export interface SubscriberMailOptions {
  /** The Mailer, made on first use: most processes never send one of these. */
  mailer: () => Promise<Mailer>;
  siteUrl: string;
  secret: string;
  now?: () => Date;
  /** The newest public week, which the welcome e-mail links to (server/published-site.ts). */
  newestRecap?: () => Pick<RecapSummary, 'path' | 'headline'> | undefined;
}

export interface SubscriberMail {
  sendConfirmation(subscriberId: string, email: string): Promise<MessageOutcome>;
  sendWelcome(subscriberId: string, email: string): Promise<MessageOutcome>;
}

export function subscriberMail({ mailer: getMailer, siteUrl, secret, now = () => new Date(), newestRecap }: SubscriberMailOptions): SubscriberMail {
  const home = siteUrl.replace(/\/+$/, '');
  return {
    async sendConfirmation(subscriberId, email) {
      const confirmUrl = confirmUrlFor(home, createConfirmToken(subscriberId, now(), secret));
      const rendered = await renderTransactional(ConfirmEmail, { confirmUrl, siteUrl: `${home}/`, validDays: CONFIRM_TOKEN_DAYS }, confirmEmailText.subject);
      const mailer = await getMailer();
      return mailer.send({ to: email, from: mailer.from, ...rendered, headers: {}, tags: { kind: 'confirmation' } });
    },
    async sendWelcome(subscriberId, email) {
      const token = createUnsubscribeToken(subscriberId, secret);
      const unsubscribeUrl = unsubscribeUrlFor(home, token);
      // recaps is newest first; a week that is not public yet is not out.
      const newest = newestRecap ? newestRecap() : recaps.find((recap) => isPublic(recap, { now: now(), timeZone: 'UTC' }));
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
      const mailer = await getMailer();
      return mailer.send({
        to: email,
        from: mailer.from,
        ...rendered,
        headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
        tags: { kind: 'welcome' },
      });
    },
  };
}
