// The small print under every e-mail and the links it is made of: the subscriber's own page, the
// one-click unsubscribe, the site. Their words are written once, here.
import type { ReactNode } from 'react';
import { frameStyles } from './styles.ts';

export const footerText = {
  unsubscribe: 'Unsubscribe',
  subscription: 'Your subscription',
  subscriptionNote: 'shows what we keep about you, and lets you download or delete it.',
} as const;

export function Footer({ marginTop, children }: { marginTop: string; children: ReactNode }) {
  return <p style={frameStyles.footer(marginTop)}>{children}</p>;
}

export function FooterLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <a href={href} style={frameStyles.footerLink}>
      {children}
    </a>
  );
}

/** The site's host name (`launchedweekly.com`), linking to `href` (the site, or the site tagged for a campaign). */
export function SiteLink({ siteUrl, href = siteUrl }: { siteUrl: string; href?: string }) {
  return <FooterLink href={href}>{new URL(siteUrl).host}</FooterLink>;
}

/** 'Your subscription' and what that page offers. */
export function SubscriptionLink({ href }: { href: string }) {
  return (
    <>
      <FooterLink href={href}>{footerText.subscription}</FooterLink> {footerText.subscriptionNote}
    </>
  );
}
