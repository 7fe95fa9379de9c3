// The welcome e-mail (WELCOME_EMAIL=on): sent once per address, ever, when it becomes active.
// It points to the newest recap, so the reader has something to read before Monday, and to their
// own subscription page.
import { site } from '../content/site.ts';
import { Footer, FooterLink, footerText, SiteLink, SubscriptionLink } from './kit/Footer.tsx';
import { Brand, EmailFrame } from './kit/Frame.tsx';
import { messageStyles as styles } from './kit/styles.ts';

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
    <EmailFrame width="560px">
      <Brand />
      <h1 style={styles.heading}>{welcomeEmailText.heading}</h1>
      <p style={styles.text}>{welcomeEmailText.body}</p>
      <a href={newestRecapUrl} style={styles.button}>
        {welcomeEmailText.readNewest(newestRecapTitle)}
      </a>
      <Footer marginTop="24px">
        <SubscriptionLink href={subscriptionUrl} /> <FooterLink href={unsubscribeUrl}>{footerText.unsubscribe}</FooterLink>{' '}·{' '}
        <SiteLink siteUrl={siteUrl} />
      </Footer>
    </EmailFrame>
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
