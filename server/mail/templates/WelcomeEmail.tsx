// The welcome e-mail (WELCOME_EMAIL=on): sent once per address, ever, when it becomes active.
// It points to the newest recap, so the reader has something to read before Monday, and to their
// own subscription page.
import { site } from '../../../content/site.ts';
import { ButtonMessage } from './kit/ButtonMessage.tsx';
import { FooterLink, footerText, SiteLink, SubscriptionLink } from './kit/Footer.tsx';

export interface WelcomeEmailProps {
  siteUrl: string;
  newestRecapUrl: string;
  newestRecapTitle: string | null;
  /** 'Your subscription': state, download, delete (the unsubscribe link's token). */
  subscriptionUrl: string;
  unsubscribeUrl: string;
}

export const welcomeEmailText = {
  subject: `Welcome to ${site.name}`,
  heading: 'You are on the list',
  body: 'Every Monday you will get the week’s Top 10 launches, with a note on each. The newest recap is already up:',
  readNewest: (title: string | null) => (title ? `Read “${title}”` : 'Read the newest recap'),
} as const;

export function WelcomeEmail({ siteUrl, newestRecapUrl, newestRecapTitle, subscriptionUrl, unsubscribeUrl }: WelcomeEmailProps) {
  return (
    <ButtonMessage heading={welcomeEmailText.heading} body={welcomeEmailText.body} button={{ href: newestRecapUrl, label: welcomeEmailText.readNewest(newestRecapTitle) }}>
      <SubscriptionLink href={subscriptionUrl} /> <FooterLink href={unsubscribeUrl}>{footerText.unsubscribe}</FooterLink>{' '}·{' '}
      <SiteLink siteUrl={siteUrl} />
    </ButtonMessage>
  );
}

WelcomeEmail.PreviewProps = {
  siteUrl: 'http://localhost:3000/',
  newestRecapUrl: 'http://localhost:3000/weekly-recap-july-14',
  newestRecapTitle: 'AI agents everywhere',
  subscriptionUrl: 'http://localhost:3000/subscription?token=preview',
  unsubscribeUrl: 'http://localhost:3000/unsubscribe?token=preview',
} satisfies WelcomeEmailProps;

export default WelcomeEmail;
