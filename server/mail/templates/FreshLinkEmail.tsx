// The e-mail a "Download my data", "Delete my data" or "Subscribe again" button sends first: one
// button that opens the page where the owner does it. The link works once, for one hour; the page,
// not the link, acts (a POST from its button), because mail scanners open every link in a message.
import { site } from '../../../content/site.ts';
import { ButtonMessage } from './kit/ButtonMessage.tsx';
import { SiteLink } from './kit/Footer.tsx';

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
    <ButtonMessage
      heading={freshLinkEmailText.heading[purpose]}
      body={freshLinkEmailText.body[purpose]}
      button={{ href: linkUrl, label: freshLinkEmailText.button[purpose] }}
    >
      {freshLinkEmailText.validity(validMinutes)} {freshLinkEmailText.notYou} <SiteLink siteUrl={siteUrl} />
    </ButtonMessage>
  );
}

FreshLinkEmail.PreviewProps = {
  purpose: 'download',
  linkUrl: 'http://localhost:3000/subscription/link?token=preview',
  siteUrl: 'http://localhost:3000',
  validMinutes: 60,
} satisfies FreshLinkEmailProps;

export default FreshLinkEmail;
