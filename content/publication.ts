// When a week becomes public: from its date at 09:00 on the wall clock of DIGEST_TZ, unless its
// file sets `publishAt` (an ISO instant). Before that instant every public surface acts as if the
// week did not exist. Pure: the clock and the time zone are arguments; the zone's rules (daylight
// saving included) come from Intl, never from a table of our own.
import { parseIsoDate } from './dates.ts';
import type { Recap } from './schema.ts';

/** The hour, on the week's date in DIGEST_TZ, at which a week without `publishAt` becomes public. */
export const PUBLICATION_HOUR = 9;

export interface PublicationClock {
  now: Date;
  timeZone: string;
}

export type Publishable = Pick<Recap, 'date' | 'publishAt'>;

/** One formatter per time zone: building an Intl.DateTimeFormat costs far more than using one. */
const wallClockFormats = new Map<string, Intl.DateTimeFormat>();

function wallClockFormat(timeZone: string): Intl.DateTimeFormat {
  let format = wallClockFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    wallClockFormats.set(timeZone, format);
  }
  return format;
}

/** What the wall clock of `timeZone` reads at `instant`, as if that reading were UTC (to the second, outside UTC). */
export function wallClockAsUtc(instant: number, timeZone: string): number {
  // UTC's clock is the instant itself; the default zone so never loads ICU's zone data (MBs of resident memory).
  if (timeZone === 'UTC') return instant;
  const parts = wallClockFormat(timeZone).formatToParts(new Date(instant));
  const value = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return Date.UTC(value('year'), value('month') - 1, value('day'), value('hour'), value('minute'), value('second'));
}

/**
 * The instant at which the wall clock of `timeZone` shows `hour`:00 on `isoDate`. In the hour a
 * clock skips (spring forward) it is the first instant after the gap; in the hour a clock repeats,
 * the first of the two.
 */
export function wallClockInstant(isoDate: string, hour: number, timeZone: string): Date {
  const wanted = parseIsoDate(isoDate).getTime() + hour * 3_600_000;
  // The zone's offset near the wanted reading, then once more at the candidate, in case the
  // offset changes between the two (a transition that same night).
  let candidate = wanted - (wallClockAsUtc(wanted, timeZone) - wanted);
  candidate = wanted - (wallClockAsUtc(candidate, timeZone) - candidate);
  const reading = wallClockAsUtc(candidate, timeZone);
  // Inside a skipped hour the clock reads earlier than wanted: step over the gap.
  if (reading < wanted) return new Date(candidate + (wanted - reading));
  const earlier = candidate - 3_600_000;
  if (wallClockAsUtc(earlier, timeZone) === wanted) candidate = earlier;
  return new Date(candidate);
}

/** When a week becomes public: its `publishAt`, or its date at 09:00 in `timeZone`. */
export function publicationInstant(recap: Publishable, timeZone: string): Date {
  if (recap.publishAt !== undefined) return new Date(recap.publishAt);
  return wallClockInstant(recap.date, PUBLICATION_HOUR, timeZone);
}

export function isPublic(recap: Publishable, { now, timeZone }: PublicationClock): boolean {
  return publicationInstant(recap, timeZone).getTime() <= now.getTime();
}

/** The weeks public at `now`, in the order given. */
export function publicRecaps<T extends Publishable>(recaps: readonly T[], clock: PublicationClock): T[] {
  return recaps.filter((recap) => isPublic(recap, clock));
}

/** `Mon 30 Nov 2026 09:00 UTC` (or without the year): an instant on the wall clock of a time zone, named by it. */
export function formatInstant(instant: Date, timeZone: string, { year = true, day = true }: { year?: boolean; day?: boolean } = {}): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const time = `${part('hour')}:${part('minute')} ${timeZone}`;
  if (!day) return time;
  return `${part('weekday')} ${part('day')} ${part('month')}${year ? ` ${part('year')}` : ''} ${time}`;
}
