// The Monday e-mail: one week's Top 10, the same typed recap the site renders. Table-based markup
// from React Email with inline styles only (no web fonts, no scripts, no images), a 600px column
// that shrinks to fit a phone.
import { Body, Container, Head, Heading, Hr, Html, Link, Preview, Section, Text } from '@react-email/components';
import type { CSSProperties } from 'react';
import { formatWeekDate } from '../content/dates.ts';
import { recaps } from '../content/index.ts';
import type { Recap, RecapEntry } from '../content/schema.ts';
import { site, withCampaign } from '../content/site.ts';

export interface WeeklyDigestEmailProps {
  recap: Recap;
  /** The recap's page on the site, SITE_URL + recap.path (campaign parameters are added here). */
  webUrl: string;
  /** This subscriber's own link; it is never tagged, it only has to work. */
  unsubscribeUrl: string;
  siteUrl: string;
}

export const emailText = {
  webVersion: 'Read this recap on the web',
  footerWhy: (siteName: string) => `You are getting this e-mail because you signed up for the ${siteName} newsletter at`,
  unsubscribe: 'Unsubscribe',
  unsubscribeNote: 'with one click, any time.',
} as const;

export function digestSubject(recap: Recap): string {
  return `${site.recap.weekOf(formatWeekDate(recap.date))}: ${recap.headline}`;
}

const fontFamily = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
const colors = { brand: '#c0265c', ink: '#18181b', muted: '#52525b', surface: '#fafaf9', line: '#e4e4e7', page: '#f4f4f5', marker: '#16a34a' };

const styles = {
  body: { backgroundColor: colors.page, margin: 0, padding: '24px 0', fontFamily, color: colors.ink },
  container: { maxWidth: '600px', width: '100%', margin: '0 auto', backgroundColor: '#ffffff', borderRadius: '12px', padding: '32px 24px' },
  brand: { margin: 0, fontSize: '14px', fontWeight: 700, letterSpacing: '0.02em', color: colors.marker },
  weekOf: { margin: '8px 0 0', fontSize: '28px', lineHeight: '34px', fontWeight: 800, color: colors.ink },
  headline: { margin: '8px 0 0', fontSize: '20px', lineHeight: '28px', fontWeight: 600, color: colors.ink },
  subtitle: { margin: '4px 0 0', fontSize: '15px', lineHeight: '22px', color: colors.muted },
  intro: { margin: '20px 0 0', fontSize: '16px', lineHeight: '26px', color: colors.ink },
  entry: { padding: '20px 0 0' },
  rank: { fontSize: '15px', fontWeight: 700, color: colors.muted },
  name: { margin: '2px 0 0', fontSize: '19px', lineHeight: '26px', fontWeight: 700 },
  nameLink: { color: colors.ink, textDecoration: 'underline', textDecorationColor: colors.brand },
  tagline: { margin: '4px 0 0', fontSize: '15px', lineHeight: '22px', color: colors.muted },
  upvotes: { margin: '6px 0 0', fontSize: '14px', lineHeight: '20px', fontWeight: 600, color: colors.ink },
  note: { backgroundColor: colors.surface, borderRadius: '8px', padding: '12px 14px', marginTop: '10px' },
  noteLabel: { margin: 0, fontSize: '12px', fontWeight: 700, letterSpacing: '0.04em', textTransform: 'uppercase', color: colors.brand },
  noteText: { margin: '4px 0 0', fontSize: '15px', lineHeight: '23px', color: colors.ink },
  webLink: { display: 'inline-block', marginTop: '28px', fontSize: '16px', fontWeight: 700, color: colors.brand },
  hr: { borderColor: colors.line, margin: '28px 0 0' },
  footer: { margin: '16px 0 0', fontSize: '13px', lineHeight: '20px', color: colors.muted },
  footerLink: { color: colors.muted, textDecoration: 'underline' },
} satisfies Record<string, CSSProperties>;

function Entry({ entry, week }: { entry: RecapEntry; week: string }) {
  return (
    <Section style={styles.entry}>
      <Heading as="h2" style={styles.name}>
        <span style={styles.rank}>#{entry.rank}</span>{' '}
        <Link href={withCampaign(entry.url, { medium: 'email', week })} style={styles.nameLink}>
          {entry.name}
        </Link>
      </Heading>
      <Text style={styles.tagline}>{entry.tagline}</Text>
      <Text style={styles.upvotes}>{site.recap.upvotes(entry.upvotes)}</Text>
      <Section style={styles.note}>
        <Text style={styles.noteLabel}>{site.recap.editorsNote}</Text>
        <Text style={styles.noteText}>{entry.note}</Text>
      </Section>
    </Section>
  );
}

export function WeeklyDigestEmail({ recap, webUrl, unsubscribeUrl, siteUrl }: WeeklyDigestEmailProps) {
  const week = recap.date;
  const siteHost = new URL(siteUrl).host;
  return (
    <Html lang="en" dir="ltr">
      <Head>
        <meta name="color-scheme" content="light" />
        <meta name="supported-color-schemes" content="light" />
      </Head>
      <Preview>{`${recap.headline} — ${recap.title}`}</Preview>
      <Body style={styles.body}>
        <Container style={styles.container}>
          <Text style={styles.brand}>{site.name} · Top 10</Text>
          <Heading as="h1" style={styles.weekOf}>
            {site.recap.weekOf(formatWeekDate(recap.date))}
          </Heading>
          <Text style={styles.headline}>{recap.headline}</Text>
          <Text style={styles.subtitle}>{site.recap.subtitle}</Text>
          <Text style={styles.intro}>{recap.intro}</Text>
          {recap.entries.map((entry) => (
            <Entry key={entry.rank} entry={entry} week={week} />
          ))}
          <Link href={withCampaign(webUrl, { medium: 'email', week })} style={styles.webLink}>
            {emailText.webVersion} →
          </Link>
          <Hr style={styles.hr} />
          <Text style={styles.footer}>
            {emailText.footerWhy(site.name)}{' '}
            <Link href={withCampaign(siteUrl, { medium: 'email', week })} style={styles.footerLink}>
              {siteHost}
            </Link>
            .{' '}
            <Link href={unsubscribeUrl} style={styles.footerLink}>
              {emailText.unsubscribe}
            </Link>{' '}
            {emailText.unsubscribeNote}
          </Text>
        </Container>
      </Body>
    </Html>
  );
}

const previewRecap = recaps[0]!;

WeeklyDigestEmail.PreviewProps = {
  recap: previewRecap,
  webUrl: `http://localhost:3000${previewRecap.path}`,
  unsubscribeUrl: 'http://localhost:3000/unsubscribe?token=preview',
  siteUrl: 'http://localhost:3000',
} satisfies WeeklyDigestEmailProps;

export default WeeklyDigestEmail;
