// What `npm run preview -- WEEK` prints: the signed link to a coming week's page (first line, alone,
// so a script can take it), its e-mail's link, when the week will be public and sent, and how long
// the link works.
import { formatWeekDate } from '../content/dates.ts';
import { formatInstant, isPublic } from '../content/publication.ts';
import type { Recap } from '../content/schema.ts';
import { site } from '../content/site.ts';
import { createPreviewToken, previewEmailUrlFor, previewUrlFor, verifyPreviewToken } from '../server/site/preview-token.ts';
import { whenOf, type Schedule } from './digest/when.ts';

export interface PreviewLinkOptions {
  recap: Recap;
  now: Date;
  siteUrl: string;
  /** UNSUBSCRIBE_SECRET of the site that will open the link. */
  secret: string;
  schedule: Schedule;
}

export function previewLinkLines({ recap, now, siteUrl, secret, schedule }: PreviewLinkOptions): { stdout: string[]; stderr: string[] } {
  const token = createPreviewToken(recap.date, now, secret);
  const check = verifyPreviewToken(token, now, secret);
  const until = check.ok ? formatInstant(check.expiresAt, schedule.timezone) : '';
  const when = whenOf(recap, schedule);
  const label = site.recap.weekOf(formatWeekDate(recap.date));
  const already = isPublic(recap, { now, timeZone: schedule.timezone });
  return {
    stdout: [
      previewUrlFor(siteUrl, recap.path, token),
      `${label} (${recap.headline}): ${when.line}${already ? ' (already public)' : ''}.`,
      `Its e-mail as it will be sent: ${previewEmailUrlFor(siteUrl, token)}`,
      `The link works until ${until} for anyone who has it; it is never cached publicly and search engines are told not to index it.`,
      `A test copy to yourself: npm run digest -- --recap ${recap.date} --to you@example.com`,
    ],
    stderr: when.warning ? [`warning: ${when.warning}`] : [],
  };
}
