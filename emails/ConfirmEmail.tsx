// The double opt-in e-mail: one button that opens the confirmation page. The page, not the link,
// confirms (a POST from its button), because mail scanners open every link in a message.
import { site } from '../content/site.ts';
import { Footer, SiteLink } from './kit/Footer.tsx';
import { Brand, EmailFrame } from './kit/Frame.tsx';
import { messageStyles as styles } from './kit/styles.ts';

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

export function ConfirmEmail({ confirmUrl, siteUrl, validDays }: ConfirmEmailProps) {
  return (
    <EmailFrame width="560px">
      <Brand />
      <h1 style={styles.heading}>{confirmEmailText.heading}</h1>
      <p style={styles.text}>{confirmEmailText.body}</p>
      <a href={confirmUrl} style={styles.button}>
        {confirmEmailText.button}
      </a>
      <Footer marginTop="24px">
        {confirmEmailText.validity(validDays)} {confirmEmailText.notYou} <SiteLink siteUrl={siteUrl} />
      </Footer>
    </EmailFrame>
  );
}

ConfirmEmail.PreviewProps = {
  confirmUrl: 'http://localhost:3000/confirm?token=preview',
  siteUrl: 'http://localhost:3000',
  validDays: 7,
} satisfies ConfirmEmailProps;

export default ConfirmEmail;
