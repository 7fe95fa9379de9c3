// The checks one copy of a digest must pass before any of it leaves: the digest job runs them on
// every send (scheduled, manual and --to), `npm run validate-content` on every recap, and the
// report shows them for the next run. Pure: a rendered copy in, a verdict per check out.
//
// - size: Gmail clips a message whose HTML is over 102 KB behind "[Message clipped]", which hides
//   the footer with the unsubscribe link; a margin leaves room for the provider's own additions.
// - links: a relative link goes nowhere in a mail client, and an http or local link in production
//   means SITE_URL or a recap points somewhere readers cannot (or should not) go.
// - subject: clients cut subjects around 78 characters (RFC 5322's line length); longer may be
//   deliberate, so it is a warning only.
// - text: the plain-text part is what text-only clients and many spam filters read; a product
//   missing from it is a product some readers never see.
import { goUrlFor } from '../../../content/go-links.ts';
import { plural, pluralWord } from '../../../content/text.ts';

export const GMAIL_CLIP_BYTES = 102 * 1024;
export const SIZE_MARGIN_BYTES = 10 * 1024;
export const MAX_HTML_BYTES = GMAIL_CLIP_BYTES - SIZE_MARGIN_BYTES;
export const SUBJECT_MAX_CHARS = 78;

export type CheckId = 'size' | 'links' | 'subject' | 'text';
export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface CheckResult {
  id: CheckId;
  title: string;
  status: CheckStatus;
  /** What was measured or found, in one sentence. */
  detail: string;
  /** How to fix it; present unless the check passed. */
  fix?: string;
}

export interface PresendCopy {
  recap: { date: string; path: string; entries: readonly { url: string; rank: number }[] };
  subject: string;
  html: string;
  text: string;
  siteUrl: string;
  /** NODE_ENV=production: local and example hosts are refused, and every link must be https. */
  production: boolean;
}

const LOCAL_HOST = /^(localhost|.*\.localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|\[::1\]|.*\.local)$/i;
// RFC 2606 and RFC 6761: names reserved so that they never reach a real reader.
const EXAMPLE_HOST = /(^|\.)(example\.(com|net|org)|example|test|invalid)$/i;

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

const decodeAttribute = (value: string) =>
  value.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** Every href in the HTML part, as the mail client will read it. */
export function htmlLinks(html: string): string[] {
  return [...html.matchAll(/\shref\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)].map((match) => decodeAttribute(match[1] ?? match[2] ?? '').trim());
}

/** Every http(s) URL written out in the text part. */
export function textLinks(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s<>"\])]+/gi)].map((match) => match[0].replace(/[.,;:!?]+$/, ''));
}

/** A URL without its query and fragment, to compare a tracked link with the recap's own. */
const bare = (url: string) => url.replace(/[?#].*$/, '').replace(/\/+$/, '');

function checkSize(copy: PresendCopy): CheckResult {
  const bytes = Buffer.byteLength(copy.html, 'utf8');
  const title = 'HTML under Gmail’s clipping size';
  if (bytes <= MAX_HTML_BYTES) {
    return { id: 'size', title, status: 'pass', detail: `${kb(bytes)} of at most ${kb(MAX_HTML_BYTES)} (Gmail clips at ${kb(GMAIL_CLIP_BYTES)}).` };
  }
  return {
    id: 'size',
    title,
    status: 'fail',
    detail: `The HTML of one copy is ${kb(bytes)}; Gmail clips at ${kb(GMAIL_CLIP_BYTES)} and hides the rest, unsubscribe link included (limit with margin: ${kb(MAX_HTML_BYTES)}).`,
    fix: `Shorten the recap's intro, taglines or notes in content/recaps/${copy.recap.date}.ts by at least ${kb(bytes - MAX_HTML_BYTES)}.`,
  };
}

/** Why one link would not work for a reader, or null. */
function linkProblem(link: string, copy: PresendCopy): string | null {
  if (/^mailto:/i.test(link)) return null;
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return 'is not an absolute URL';
  }
  const site = new URL(copy.siteUrl);
  const ownSite = url.host === site.host;
  if (ownSite && url.protocol !== site.protocol) return `uses ${url.protocol}// while SITE_URL is ${site.origin}`;
  if (url.protocol !== 'https:' && (copy.production || !ownSite)) return 'is not https';
  if (copy.production && LOCAL_HOST.test(url.hostname)) return 'points to this machine (localhost)';
  if (copy.production && EXAMPLE_HOST.test(url.hostname)) return 'points to a reserved example domain';
  if (!copy.production && !ownSite && LOCAL_HOST.test(url.hostname)) return `points to a local address that is not SITE_URL (${site.origin})`;
  return null;
}

function checkLinks(copy: PresendCopy): CheckResult {
  const title = 'Every link absolute https';
  const links = [...new Set([...htmlLinks(copy.html), ...textLinks(copy.text)])];
  const problems = links.flatMap((link) => {
    const problem = linkProblem(link, copy);
    return problem ? [`${link} ${problem}`] : [];
  });
  if (problems.length === 0) return { id: 'links', title, status: 'pass', detail: `${links.length} links, all absolute and reachable by readers.` };
  const shown = problems.slice(0, 3).join('; ');
  return {
    id: 'links',
    title,
    status: 'fail',
    detail: `${problems.length} of ${links.length} links would not work for a reader: ${shown}${problems.length > 3 ? '; …' : ''}.`,
    fix: `Set SITE_URL to the site's public https address (e.g. https://launchedweekly.com), and give every product in content/recaps/${copy.recap.date}.ts an absolute https url.`,
  };
}

function checkSubject(copy: PresendCopy): CheckResult {
  const length = [...copy.subject].length;
  const title = `Subject within ${SUBJECT_MAX_CHARS} characters`;
  if (length <= SUBJECT_MAX_CHARS) return { id: 'subject', title, status: 'pass', detail: `${length} characters: “${copy.subject}”.` };
  return {
    id: 'subject',
    title,
    status: 'warn',
    detail: `The subject is ${length} characters; many clients cut it after about ${SUBJECT_MAX_CHARS}: “${copy.subject}”.`,
    fix: `If that is not deliberate, shorten the recap's headline in content/recaps/${copy.recap.date}.ts.`,
  };
}

function checkText(copy: PresendCopy): CheckResult {
  const title = 'Text part carries every product link';
  if (copy.text.trim() === '') {
    return { id: 'text', title, status: 'fail', detail: 'The e-mail has no plain-text part.', fix: 'Render the digest with its plain-text part (emails/render-digest.ts).' };
  }
  const present = new Set(textLinks(copy.text).map(bare));
  // Each launch is linked directly or through the site's /go/ link, which leads to it.
  const linked = (entry: PresendCopy['recap']['entries'][number]) => present.has(bare(entry.url)) || present.has(bare(goUrlFor(copy.siteUrl, copy.recap, entry.rank)));
  const missing = copy.recap.entries.filter((entry) => !linked(entry)).map((entry) => entry.url);
  if (missing.length === 0) return { id: 'text', title, status: 'pass', detail: `All ${copy.recap.entries.length} product links are in the plain-text part.` };
  return {
    id: 'text',
    title,
    status: 'fail',
    detail: `The plain-text part lacks ${plural(missing.length, 'product link')}: ${missing.join(', ')}.`,
    fix: 'Make the digest template write each product’s link in its plain-text part (server/mail/templates/WeeklyDigestEmail.tsx).',
  };
}

export function runPresendChecks(copy: PresendCopy): CheckResult[] {
  return [checkSize(copy), checkLinks(copy), checkSubject(copy), checkText(copy)];
}

/**
 * Why a send must stop, naming the recap, each failed check and its fix; null when nothing
 * failed (warnings do not stop a send). The job prefixes it with "Nothing sent: ".
 */
export function presendRefusal(recapLabel: string, results: readonly CheckResult[]): string | null {
  const failed = results.filter((result) => result.status === 'fail');
  if (failed.length === 0) return null;
  const reasons = failed.map((result) => `${result.title}: ${result.detail} Fix: ${result.fix ?? ''}`.trim());
  return `${recapLabel} failed the pre-send ${pluralWord(failed.length, 'check')}. ${reasons.join(' ')}`;
}
