// Calendar helpers for recap weeks. Dates are ISO `YYYY-MM-DD` strings and are handled in UTC so
// that a server in any time zone derives the same path and label from the same file.

const MONTHS = [
  'january', 'february', 'march', 'april', 'may', 'june',
  'july', 'august', 'september', 'october', 'november', 'december',
] as const;

const DAY_MS = 24 * 60 * 60 * 1000;

export function parseIsoDate(iso: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!match) throw new Error(`"${iso}" is not a date in YYYY-MM-DD form`);
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) {
    throw new Error(`"${iso}" is not a real calendar date`);
  }
  return date;
}

/**
 * Orders ISO dates (YYYY-MM-DD), oldest first. Plain string order is date order for these, and it
 * never calls into ICU: `localeCompare` would load its collation tables into every server
 * process's resident memory, to sort digits and dashes.
 */
export function compareIsoDates(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A sort order for anything dated (weeks, recaps): newest first. */
export const byDateNewestFirst = (a: { date: string }, b: { date: string }): number => compareIsoDates(b.date, a.date);

/** A sort order for anything dated: oldest first. */
export const byDateOldestFirst = (a: { date: string }, b: { date: string }): number => compareIsoDates(a.date, b.date);

export function isIsoDate(value: string): boolean {
  try {
    parseIsoDate(value);
    return true;
  } catch {
    return false;
  }
}

/** Whether a string is an ISO 8601 instant with an explicit offset (`2026-11-30T09:00:00Z`, `…T10:00+01:00`). */
export function isIsoInstant(value: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,3})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/.exec(value);
  return match !== null && isIsoDate(match[1]!) && !Number.isNaN(Date.parse(value));
}

export function toIsoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(iso: string, days: number): string {
  return toIsoDate(new Date(parseIsoDate(iso).getTime() + days * DAY_MS));
}

export function daysBetween(earlierIso: string, laterIso: string): number {
  return Math.round((parseIsoDate(laterIso).getTime() - parseIsoDate(earlierIso).getTime()) / DAY_MS);
}

/**
 * The year whose weeks have no year in their address: the seed published 2025's weeks as
 * `/weekly-recap-{month}-{day}`, and those addresses are links people already hold.
 */
export const UNSUFFIXED_YEAR = 2025;

/**
 * The route of a week, the one rule every address of a recap comes from (new-recap, validation,
 * pages, previous/next links, sitemap, feed, share cards, e-mail): `2025-07-14` →
 * `/weekly-recap-july-14` (2025, the seed's routes); `2026-02-02` → `/weekly-recap-february-2-2026`
 * (every other year carries it, so a week never collides with the same day of another year).
 */
export function recapPathFor(iso: string): string {
  const date = parseIsoDate(iso);
  const year = date.getUTCFullYear();
  const base = `/weekly-recap-${MONTHS[date.getUTCMonth()]}-${date.getUTCDate()}`;
  return year === UNSUFFIXED_YEAR ? base : `${base}-${year}`;
}

/** `july` → `July`. */
const monthName = (month: number) => `${MONTHS[month]![0]!.toUpperCase()}${MONTHS[month]!.slice(1)}`;

// The two labels below are written out by hand, as `toLocaleDateString('en-US', …)` writes them in
// UTC, rather than through Intl: that loads ICU's date formats into the resident memory of a
// server whose DIGEST_TZ is UTC and which otherwise never needs them (content/content.test.ts compares them with Intl).

/** `2025-07-14` → `July 14, 2025`, the form used in 'Week of {date}' and page titles. */
export function formatWeekDate(iso: string): string {
  const date = parseIsoDate(iso);
  return `${monthName(date.getUTCMonth())} ${date.getUTCDate()}, ${date.getUTCFullYear()}`;
}

/** `2025-07-14` → `Jul 14`, for compact labels such as previous/next links. */
export function formatShortDate(iso: string): string {
  const date = parseIsoDate(iso);
  return `${monthName(date.getUTCMonth()).slice(0, 3)} ${date.getUTCDate()}`;
}
