// The double opt-in e-mail: one button that opens the confirmation page. The page, not the link,
// confirms (a POST from its button), because mail scanners open every link in a message.
import { Body } from '@react-email/body';
import { Container } from '@react-email/container';
import { Head } from '@react-email/head';
import { Html } from '@react-email/html';
import type { CSSProperties } from 'react';
import { site } from '../content/site.ts';

export interface ConfirmEmailProps {
  /** GET /confirm?token=…, signed, valid for 7 days. */
  confirmUrl: string;
  siteUrl: string;
  /** How many days the link works. */
  validDays: number;
}

export const confirmEmailText = {
  subject: `Confirm your subscription to ${site.name}`,
  heading: 'One click to confirm',
  body: `Someone, hopefully you, asked for the ${site.name} Monday e-mail at this address. Press the button to confirm; nothing is sent until you do.`,
  button: 'Confirm my subscription',
  validity: (days: number) => `The link works for ${days} days.`,
  notYou: 'If it was not you, ignore this e-mail: without a click you will get nothing more from us.',
} as const;

const fontFamily = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";

export const transactionalStyles = {
  body: { backgroundColor: '#f4f4f5', margin: 0, padding: '24px 0', fontFamily, color: '#18181b' },
  container: { maxWidth: '560px', width: '100%', margin: '0 auto', backgroundColor: '#ffffff', borderRadius: '12px', padding: '32px 24px' },
  brand: { margin: 0, fontSize: '14px', fontWeight: 700, color: '#16a34a' },
  heading: { margin: '8px 0 0', fontSize: '24px', lineHeight: '30px', fontWeight: 800 },
  text: { margin: '16px 0 0', fontSize: '16px', lineHeight: '26px' },
  button: { display: 'inline-block', marginTop: '24px', padding: '12px 20px', borderRadius: '8px', backgroundColor: '#18181b', color: '#ffffff', fontWeight: 700, textDecoration: 'none' },
  footer: { margin: '24px 0 0', fontSize: '13px', lineHeight: '20px', color: '#52525b' },
  footerLink: { color: '#52525b', textDecoration: 'underline' },
} satisfies Record<string, CSSProperties>;

export function ConfirmEmail({ confirmUrl, siteUrl, validDays }: ConfirmEmailProps) {
  const styles = transactionalStyles;
  return (
    <Html lang="en" dir="ltr">
      <Head />
      <Body style={styles.body}>
        <Container style={styles.container}>
          <p style={styles.brand}>{site.name}</p>
          <h1 style={styles.heading}>{confirmEmailText.heading}</h1>
          <p style={styles.text}>{confirmEmailText.body}</p>
          <a href={confirmUrl} style={styles.button}>
            {confirmEmailText.button}
          </a>
          <p style={styles.footer}>
            {confirmEmailText.validity(validDays)} {confirmEmailText.notYou}{' '}
            <a href={siteUrl} style={styles.footerLink}>
              {new URL(siteUrl).host}
            </a>
          </p>
        </Container>
      </Body>
    </Html>
  );
}

ConfirmEmail.PreviewProps = {
  confirmUrl: 'http://localhost:3000/confirm?token=preview',
  siteUrl: 'http://localhost:3000',
  validDays: 7,
} satisfies ConfirmEmailProps;

export default ConfirmEmail;
