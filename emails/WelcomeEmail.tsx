// The welcome e-mail (WELCOME_EMAIL=on): sent once per address, ever, when it becomes active.
// It points to the newest recap, so the reader has something to read before Monday, and to their
// own subscription page.
import { Body } from '@react-email/body';
import { Container } from '@react-email/container';
import { Head } from '@react-email/head';
import { Html } from '@react-email/html';
import { site } from '../content/site.ts';
import { transactionalStyles as styles } from './ConfirmEmail.tsx';

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
  manage: 'Your subscription',
  manageNote: 'shows what we keep about you, and lets you download or delete it.',
  unsubscribe: 'Unsubscribe',
} as const;

export function WelcomeEmail({ siteUrl, newestRecapUrl, newestRecapTitle, subscriptionUrl, unsubscribeUrl }: WelcomeEmailProps) {
  return (
    <Html lang="en" dir="ltr">
      <Head />
      <Body style={styles.body}>
        <Container style={styles.container}>
          <p style={styles.brand}>{site.name}</p>
          <h1 style={styles.heading}>{welcomeEmailText.heading}</h1>
          <p style={styles.text}>{welcomeEmailText.body}</p>
          <a href={newestRecapUrl} style={styles.button}>
            {welcomeEmailText.readNewest(newestRecapTitle)}
          </a>
          <p style={styles.footer}>
            <a href={subscriptionUrl} style={styles.footerLink}>
              {welcomeEmailText.manage}
            </a>{' '}
            {welcomeEmailText.manageNote}{' '}
            <a href={unsubscribeUrl} style={styles.footerLink}>
              {welcomeEmailText.unsubscribe}
            </a>{' '}
            ·{' '}
            <a href={siteUrl} style={styles.footerLink}>
              {new URL(siteUrl).host}
            </a>
          </p>
        </Container>
      </Body>
    </Html>
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
