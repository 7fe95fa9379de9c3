// The thanks a referrer gets when their share link reaches one of the operator's REFERRAL_MILESTONES
// (each milestone once; the words are in content/referrals.ts). Its button leads to their own
// subscription page, where their link and count are.
import { referralText } from '../../../content/referrals.ts';
import { ButtonMessage } from './kit/ButtonMessage.tsx';
import { FooterLink, footerText, SiteLink } from './kit/Footer.tsx';

export interface ReferralThanksEmailProps {
  siteUrl: string;
  /** Readers credited to the link when the milestone was reached. */
  count: number;
  subscriptionUrl: string;
  unsubscribeUrl: string;
}

export function ReferralThanksEmail({ siteUrl, count, subscriptionUrl, unsubscribeUrl }: ReferralThanksEmailProps) {
  return (
    <ButtonMessage heading={referralText.thanks.heading} body={referralText.thanks.body(count)} button={{ href: subscriptionUrl, label: referralText.thanks.button }}>
      <FooterLink href={unsubscribeUrl}>{footerText.unsubscribe}</FooterLink> · <SiteLink siteUrl={siteUrl} />
    </ButtonMessage>
  );
}

ReferralThanksEmail.PreviewProps = {
  siteUrl: 'http://localhost:3000/',
  count: 3,
  subscriptionUrl: 'http://localhost:3000/subscription?token=preview',
  unsubscribeUrl: 'http://localhost:3000/unsubscribe?token=preview',
} satisfies ReferralThanksEmailProps;

export default ReferralThanksEmail;
