// The e-mail a "Download my data", "Delete my data" or "Subscribe again" button sends first: one
// button that opens the page where the owner does it. The link works once, for one hour; the page,
// not the link, acts (a POST from its button), because mail scanners open every link in a message.
import { Body } from '@react-email/body';
import { Container } from '@react-email/container';
import { Head } from '@react-email/head';
import { Html } from '@react-email/html';
import { site } from '../content/site.ts';
import { transactionalStyles as styles } from './ConfirmEmail.tsx';

export type FreshLinkPurpose = 'download' | 'delete' | 'resubscribe';

export interface FreshLinkEmailProps {
  purpose: FreshLinkPurpose;
  /** GET /subscription/link?token=…, signed, one use. */
  linkUrl: string;
  siteUrl: string;
  /** How many minutes the link works. */
  validMinutes: number;
}

export const freshLinkEmailText = {
  subject: {
    download: `Your data at ${site.name}: the download link`,
    delete: `Delete your data at ${site.name}: the link`,
    resubscribe: `Subscribe again to ${site.name}: the link`,
  },
  heading: { download: 'Download your data', delete: 'Delete your data', resubscribe: 'Subscribe again' },
  body: {
    download: 'Someone, hopefully you, asked to download what we keep about this address. Press the button to get it.',
    delete: 'Someone, hopefully you, asked to delete what we keep about this address. Press the button to open the page that deletes it.',
    resubscribe: `Someone, hopefully you, asked to start the ${site.name} Monday e-mail at this address again. Press the button to confirm.`,
  },
  button: { download: 'Download my data', delete: 'Delete my data', resubscribe: 'Subscribe me again' },
  validity: (minutes: number) => `The link works once, for ${minutes} minutes.`,
  notYou: 'If it was not you, ignore this e-mail: without a click nothing changes.',
} as const satisfies Record<string, unknown>;

export function FreshLinkEmail({ purpose, linkUrl, siteUrl, validMinutes }: FreshLinkEmailProps) {
  return (
    <Html lang="en" dir="ltr">
      <Head />
      <Body style={styles.body}>
        <Container style={styles.container}>
          <p style={styles.brand}>{site.name}</p>
          <h1 style={styles.heading}>{freshLinkEmailText.heading[purpose]}</h1>
          <p style={styles.text}>{freshLinkEmailText.body[purpose]}</p>
          <a href={linkUrl} style={styles.button}>
            {freshLinkEmailText.button[purpose]}
          </a>
          <p style={styles.footer}>
            {freshLinkEmailText.validity(validMinutes)} {freshLinkEmailText.notYou}{' '}
            <a href={siteUrl} style={styles.footerLink}>
              {new URL(siteUrl).host}
            </a>
          </p>
        </Container>
      </Body>
    </Html>
  );
}

FreshLinkEmail.PreviewProps = {
  purpose: 'download',
  linkUrl: 'http://localhost:3000/subscription/link?token=preview',
  siteUrl: 'http://localhost:3000',
  validMinutes: 60,
} satisfies FreshLinkEmailProps;

export default FreshLinkEmail;
