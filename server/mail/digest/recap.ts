// Which recap a run sends, and whether it may: the newest public one (content/publication.ts), or
// the one asked for; a coming week only as a dry run or a test copy; on the schedule only while
// it is fresh.
import { byDateNewestFirst, daysBetween } from '../../../content/dates.ts';
import { formatInstant, isPublic, publicationInstant, wallClockAsUtc, type PublicationClock } from '../../../content/publication.ts';
import type { Recap } from '../../../content/schema.ts';
import { plural, weekLabel } from '../../../content/text.ts';

export interface RecapRef {
  date: string;
  path: string;
  headline: string;
  /** Days from the recap's date to today (negative: not yet come). */
  ageDays: number;
}

export interface RecapChoice {
  recaps: readonly Recap[];
  /** The run's clock and DIGEST_TZ: which weeks are public, and which day is today. */
  publication: PublicationClock;
  recapWeek?: string;
  scheduled: boolean;
  /** A dry run or a test copy may preview a recap that is not public yet. */
  preview: boolean;
  testRecipient?: string;
  freshnessDays: number;
}

export type ChosenRecap =
  | { recap: Recap; ref: RecapRef; label: string }
  | { refused: 'unknown-recap' | 'no-recap' | 'not-yet' | 'stale'; ref: RecapRef | null; message: string };

/** `YYYY-MM-DD` of an instant on the wall calendar of a time zone. */
export function isoDateIn(instant: Date, timeZone: string): string {
  return new Date(wallClockAsUtc(instant.getTime(), timeZone)).toISOString().slice(0, 10);
}

export function findRecapIn(recaps: readonly Recap[], week: string): Recap | undefined {
  const path = week.startsWith('/') ? week : `/${week}`;
  return recaps.find((recap) => recap.date === week || recap.path === path);
}

export function chooseRecap({ recaps, publication, recapWeek, scheduled, preview, testRecipient, freshnessDays }: RecapChoice): ChosenRecap {
  const today = isoDateIn(publication.now, publication.timeZone);
  const newestFirst = [...recaps].sort(byDateNewestFirst);
  const recap = recapWeek !== undefined ? findRecapIn(newestFirst, recapWeek) : newestFirst.find((candidate) => isPublic(candidate, publication));
  if (!recap && recapWeek !== undefined) {
    return { refused: 'unknown-recap', ref: null, message: `There is no recap for "${recapWeek}". Use a date such as ${newestFirst[0]?.date ?? '2025-07-14'} or its path.` };
  }
  if (!recap) return { refused: 'no-recap', ref: null, message: `Nothing to send: no recap is public yet (today is ${today}).` };

  const ageDays = daysBetween(recap.date, today);
  const ref = { date: recap.date, path: recap.path, headline: recap.headline, ageDays };
  const label = weekLabel(recap.date);
  if (!isPublic(recap, publication) && !preview && !testRecipient) {
    const at = formatInstant(publicationInstant(recap, publication.timeZone), publication.timeZone);
    return { refused: 'not-yet', ref, message: `Nothing sent: ${label} is not public until ${at}. Preview it with --to or --dry-run.` };
  }
  if (scheduled && recapWeek === undefined && ageDays >= freshnessDays && !testRecipient) {
    return {
      refused: 'stale',
      ref,
      message: `Nothing sent: the newest recap, ${label}, is ${plural(ageDays, 'day')} old, and the schedule sends a recap only during the ${plural(freshnessDays, 'day')} from its date (DIGEST_FRESHNESS_DAYS). Add this week's recap, or send that one by hand: npm run digest -- --recap ${recap.date}`,
    };
  }
  return { recap, ref, label };
}
