// The few phrasings the site, the e-mails, the feeds and the jobs all build from data: a count
// with its noun, a week's label, and a week's title (the Monday e-mail's subject, the feed item).
// Written once here so a page, a message and a log line never word the same thing two ways; the
// words themselves ('Week of …') stay with the site's other texts in site.ts.
import { formatWeekDate } from './dates.ts';
import { site } from './site.ts';

/** The noun alone, for a sentence that shows the count its own way (or not at all). */
export const pluralWord = (n: number, one: string, many = `${one}s`): string => (n === 1 ? one : many);

/**
 * `1204` → `1,204`, `-1234567.5` → `-1,234,567.5`: digits grouped by threes with commas, as
 * `toLocaleString('en-US')` writes a count, without calling into ICU (its number formats are
 * several MB of resident memory in a server that otherwise never needs them).
 */
export function groupDigits(n: number): string {
  const [whole = '', fraction] = String(Math.abs(n)).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return `${n < 0 ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** `1 day`, `3 days`, `1,204 subscribers`: the count, grouped as in English, and its noun. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${groupDigits(n)} ${pluralWord(n, one, many)}`;

/** `2025-07-14` → `Week of July 14, 2025`. */
export const weekLabel = (isoDate: string): string => site.recap.weekOf(formatWeekDate(isoDate));

/** `Week of July 14, 2025: {headline}`: the Monday e-mail's subject, the feed item's title, the share card's alt text. */
export const weekTitle = (recap: { date: string; headline: string }): string => `${weekLabel(recap.date)}: ${recap.headline}`;
