// The Monday e-mail: one week's Top 10, the same typed recap the site renders. Inline styles only
// (no web fonts, no scripts, no images), a 600px column that shrinks to fit a phone.
//
// React Email gives the document frame (html/head/body, the centred container); the rest is plain elements whose inline styles say everything once. The e-mail is sent
// once per subscriber, so every byte here is multiplied by the list: React Email's Text, Section,
// Link and Heading add default styles that these override anyway, and a table per section. Kept
// lean, one copy is about half the size, which is half the bytes the digest job encodes and
// uploads per batch (bench/RESULTS.md, "Weekly digest").
import type { CSSProperties, ReactNode } from 'react';
import { recaps } from '../../../content/index.ts';
import type { Recap, RecapEntry } from '../../../content/schema.ts';
import { goUrlFor, PAGE_ENTRY } from '../../../content/go-links.ts';
import { site, withCampaign } from '../../../content/site.ts';
import { weekLabel } from '../../../content/text.ts';
import { referralText } from '../../../content/referrals.ts';
import { Footer, FooterLink, footerText, SiteLink, SubscriptionLink } from './kit/Footer.tsx';
import { Brand, EmailFrame } from './kit/Frame.tsx';
import { Preview } from './kit/Preview.tsx';
import { colors } from './kit/styles.ts';

export interface WeeklyDigestEmailProps {
  recap: Recap;
  /**
   * The recap's page on the site, SITE_URL + recap.path. The e-mail links to it, as to each launch,
   * through the site's /go/ link (content/go-links.ts), which leads here with the campaign parameters.
   */
  webUrl: string;
  /** This subscriber's own link; it is never tagged, it only has to work. */
  unsubscribeUrl: string;
  /** 'Your subscription' (state, download, delete); by default the unsubscribe link's token on that page. */
  subscriptionUrl?: string;
  /** This subscriber's share link (/r/{code}); the site's home page for an address with none (a test send). */
  shareUrl?: string;
  siteUrl: string;
}

export const emailText = {
  webVersion: 'Read this recap on the web',
  footerWhy: (siteName: string) => `You are getting this e-mail because you signed up for the ${siteName} newsletter at`,
  unsubscribeNote: 'with one click, any time.',
} as const;

const styles = {
  weekOf: { margin: '8px 0 0', fontSize: '28px', lineHeight: '34px', fontWeight: 800 },
  headline: { margin: '8px 0 0', fontSize: '20px', lineHeight: '28px', fontWeight: 600 },
  subtitle: { margin: '4px 0 0', fontSize: '15px', lineHeight: '22px', color: colors.muted },
  intro: { margin: '20px 0 0', fontSize: '16px', lineHeight: '26px' },
  name: { margin: '20px 0 0', fontSize: '19px', lineHeight: '26px', fontWeight: 700 },
  rank: { fontSize: '15px', color: colors.muted },
  nameLink: { color: colors.ink, textDecoration: 'underline', textDecorationColor: colors.brand },
  tagline: { margin: '4px 0 0', fontSize: '15px', lineHeight: '22px', color: colors.muted },
  upvotes: { margin: '6px 0 0', fontSize: '14px', lineHeight: '20px', fontWeight: 600 },
  note: { marginTop: '10px' },
  noteCell: { backgroundColor: colors.surface, borderRadius: '8px', padding: '12px 14px' },
  noteLabel: { margin: 0, fontSize: '12px', fontWeight: 700, letterSpacing: '0.04em', textTransform: 'uppercase', color: colors.brand },
  noteText: { margin: '4px 0 0', fontSize: '15px', lineHeight: '23px' },
  webLink: { display: 'inline-block', marginTop: '28px', fontSize: '16px', fontWeight: 700, color: colors.brand },
  hr: { border: 'none', borderTop: `1px solid ${colors.line}`, margin: '28px 0 0' },
} satisfies Record<string, CSSProperties>;

/** A one-cell layout table: the one box whose background and padding every mail client keeps. */
function Box({ style, cellStyle, children }: { style: CSSProperties; cellStyle: CSSProperties; children: ReactNode }) {
  return (
    <table role="presentation" width="100%" cellPadding={0} cellSpacing={0} border={0} style={style}>
      <tbody>
        <tr>
          <td style={cellStyle}>{children}</td>
        </tr>
      </tbody>
    </table>
  );
}

function Entry({ entry, href }: { entry: RecapEntry; href: string }) {
  return (
    <>
      <h2 style={styles.name}>
        <span style={styles.rank}>#{entry.rank}</span>{' '}
        <a href={href} style={styles.nameLink}>
          {entry.name}
        </a>
      </h2>
      <p style={styles.tagline}>{entry.tagline}</p>
      <p style={styles.upvotes}>{site.recap.upvotes(entry.upvotes)}</p>
      <Box style={styles.note} cellStyle={styles.noteCell}>
        <p style={styles.noteLabel}>{site.recap.editorsNote}</p>
        <p style={styles.noteText}>{entry.note}</p>
      </Box>
    </>
  );
}

/** 'Your subscription' takes the unsubscribe link's own token (server/subscribers/signed-links.ts). */
export function subscriptionUrlFromUnsubscribe(unsubscribeUrl: string): string {
  const url = new URL(unsubscribeUrl);
  url.pathname = url.pathname.replace(/unsubscribe$/, 'subscription');
  return url.toString();
}

/** The site's home page, where a copy without a share code sends its share line. */
export const siteHomeOf = (siteUrl: string) => `${siteUrl.replace(/\/+$/, '')}/`;

export function WeeklyDigestEmail({
  recap,
  unsubscribeUrl,
  subscriptionUrl = subscriptionUrlFromUnsubscribe(unsubscribeUrl),
  siteUrl,
  shareUrl = siteHomeOf(siteUrl),
}: WeeklyDigestEmailProps) {
  const week = recap.date;
  return (
    <EmailFrame
      width="600px"
      head={
        <>
          <meta name="color-scheme" content="light" />
          <meta name="supported-color-schemes" content="light" />
        </>
      }
      preview={<Preview text={`${recap.headline} — ${recap.title}`} />}
    >
      <Brand suffix="Top 10" letterSpacing="0.02em" />
      <h1 style={styles.weekOf}>{weekLabel(recap.date)}</h1>
      <p style={styles.headline}>{recap.headline}</p>
      <p style={styles.subtitle}>{site.recap.subtitle}</p>
      <p style={styles.intro}>{recap.intro}</p>
      {recap.entries.map((entry) => (
        <Entry key={entry.rank} entry={entry} href={goUrlFor(siteUrl, recap, entry.rank)} />
      ))}
      <a href={goUrlFor(siteUrl, recap, PAGE_ENTRY)} style={styles.webLink}>
        {emailText.webVersion} →
      </a>
      <hr style={styles.hr} />
      <Footer marginTop="16px">
        {referralText.digestFooter} <FooterLink href={shareUrl}>{shareUrl}</FooterLink>
      </Footer>
      <Footer marginTop="12px">
        {emailText.footerWhy(site.name)} <SiteLink siteUrl={siteUrl} href={withCampaign(siteUrl, { medium: 'email', week })} />
        .{' '}
        <FooterLink href={unsubscribeUrl}>{footerText.unsubscribe}</FooterLink> {emailText.unsubscribeNote} <SubscriptionLink href={subscriptionUrl} />
      </Footer>
    </EmailFrame>
  );
}

const previewRecap = recaps[0]!;

WeeklyDigestEmail.PreviewProps = {
  recap: previewRecap,
  webUrl: `http://localhost:3000${previewRecap.path}`,
  unsubscribeUrl: 'http://localhost:3000/unsubscribe?token=preview',
  subscriptionUrl: 'http://localhost:3000/subscription?token=preview',
  siteUrl: 'http://localhost:3000',
} satisfies WeeklyDigestEmailProps;

export default WeeklyDigestEmail;
