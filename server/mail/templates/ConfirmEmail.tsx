// The double opt-in e-mail: one button that opens the confirmation page. The page, not the link,
// confirms (a POST from its button), because mail scanners open every link in a message.
import { site } from '../../../content/site.ts';
import { ButtonMessage } from './kit/ButtonMessage.tsx';
import { SiteLink } from './kit/Footer.tsx';

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
    <ButtonMessage heading={confirmEmailText.heading} body={confirmEmailText.body} button={{ href: confirmUrl, label: confirmEmailText.button }}>
      {confirmEmailText.validity(validDays)} {confirmEmailText.notYou} <SiteLink siteUrl={siteUrl} />
    </ButtonMessage>
  );
}

ConfirmEmail.PreviewProps = {
  confirmUrl: 'http://localhost:3000/confirm?token=preview',
  siteUrl: 'http://localhost:3000',
  validDays: 7,
} satisfies ConfirmEmailProps;

export default ConfirmEmail;
