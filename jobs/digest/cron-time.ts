// The instants a DIGEST_CRON expression names in DIGEST_TZ, computed rather than waited for, so the
// scheduler can set one timer on any Clock (a manual one included) for the next tick. Wall-clock
// rules across daylight-saving changes, as cron has them: a time repeated when the clocks go back
// fires once (the first time), and a time skipped when they go forward fires at the first instant
// after the gap.
import cron from 'node-cron';
import { wallClockAsUtc } from '../../content/publication.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

interface Matcher {
  /** Whether the expression names this instant (in its time zone). */
  matches(at: Date): boolean;
  /** Whether the expression names this wall-clock time (given as the UTC fields of `wall`). */
  matchesWall(wall: Date): boolean;
  seconds: number[];
  quarterMinutes: Set<number>;
  destroy(): void;
}

function buildMatcher(expression: string, timeZone: string): Matcher {
  const task = cron.createTask(expression, () => {}, { timezone: timeZone });
  const parsed = cron.parse(expression);
  // A field with a special value ('L') is taken as naming every day: only the gap rule reads these.
  const has = (field: readonly (number | string)[], value: number) => field.some((entry) => typeof entry === 'string' || entry === value);
  return {
    matches: (at) => task.match(at),
    matchesWall: (wall) =>
      has(parsed.second, wall.getUTCSeconds()) &&
      has(parsed.minute, wall.getUTCMinutes()) &&
      has(parsed.hour, wall.getUTCHours()) &&
      has(parsed.dayOfMonth, wall.getUTCDate()) &&
      has(parsed.month, wall.getUTCMonth() + 1) &&
      (has(parsed.dayOfWeek, wall.getUTCDay()) || (wall.getUTCDay() === 0 && has(parsed.dayOfWeek, 7))),
    seconds: [...parsed.second].sort((a, b) => a - b),
    quarterMinutes: new Set(parsed.minute.map((minute) => minute % 15)),
    destroy: () => void task.destroy(),
  };
}

/**
 * Matchers kept for the expressions in use: building one parses the expression and registers a
 * node-cron task, and the scheduler asks about the same one or two on every tick and start.
 */
const matchers = new Map<string, Matcher>();
const MOST_MATCHERS_KEPT = 16;

function matcherFor(expression: string, timeZone: string): Matcher {
  const key = `${timeZone} ${expression}`;
  let matcher = matchers.get(key);
  if (!matcher) {
    if (matchers.size >= MOST_MATCHERS_KEPT) {
      for (const kept of matchers.values()) kept.destroy();
      matchers.clear();
    }
    matcher = buildMatcher(expression, timeZone);
    matchers.set(key, matcher);
  }
  return matcher;
}

/** The wall-clock reading of an instant in a time zone, to the second, as the UTC fields of a Date, asked of Intl. */
const formattedWallClock = (at: number, timeZone: string) => Math.floor(wallClockAsUtc(at, timeZone) / 1000) * 1000;

/**
 * A time zone's offset over one stretch of six hours: one value, or, when the clocks change inside
 * it, the value before and after the instant they change (never twice in six hours).
 */
interface OffsetStretch {
  before: number;
  changeAt: number;
  after: number;
}
const STRETCH_MS = 6 * HOUR_MS;
const offsetsByZone = new Map<string, Map<number, OffsetStretch>>();
/** A search scans a year at most; a long-running server keeps no more than a few years of stretches. */
const MOST_STRETCHES_KEPT = 20_000;

const offsetAt = (at: number, timeZone: string) => formattedWallClock(at, timeZone) - Math.floor(at / 1000) * 1000;

function offsetStretch(index: number, timeZone: string): OffsetStretch {
  let stretches = offsetsByZone.get(timeZone);
  if (!stretches) offsetsByZone.set(timeZone, (stretches = new Map()));
  const known = stretches.get(index);
  if (known) return known;
  const start = index * STRETCH_MS;
  const end = start + STRETCH_MS - 1000;
  const before = offsetAt(start, timeZone);
  const after = offsetAt(end, timeZone);
  // The first second with the new offset, found by halving (about 15 questions, once per change).
  let low = start;
  let high = before === after ? end + 1000 : end;
  while (before !== after && high - low > 1000) {
    const middle = low + Math.floor((high - low) / 2000) * 1000;
    if (offsetAt(middle, timeZone) === before) low = middle;
    else high = middle;
  }
  const stretch = { before, changeAt: high, after };
  if (stretches.size >= MOST_STRETCHES_KEPT) stretches.clear();
  stretches.set(index, stretch);
  return stretch;
}

/**
 * The wall-clock reading of an instant in a time zone, to the second, as the UTC fields of a Date.
 * Offsets are asked of Intl once per six hours of time searched, not once per instant: a search
 * over a week looks at hundreds of instants.
 */
function wallClock(at: Date, timeZone: string): number {
  const ms = at.getTime();
  const stretch = offsetStretch(Math.floor(ms / STRETCH_MS), timeZone);
  return Math.floor(ms / 1000) * 1000 + (ms < stretch.changeAt ? stretch.before : stretch.after);
}

/** An instant whose wall-clock time already happened an hour earlier (the clocks went back). */
const repeatedWallTime = (at: Date, timeZone: string) => wallClock(at, timeZone) === wallClock(new Date(at.getTime() - HOUR_MS), timeZone);

/**
 * Whether the clocks went forward right before `at` (on a minute) and the expression named a
 * wall-clock time inside the skipped stretch: cron runs those at the first instant after it.
 */
function gapTickBefore(at: Date, timeZone: string, matcher: Matcher): boolean {
  const wallAt = wallClock(at, timeZone);
  const wallBefore = wallClock(new Date(at.getTime() - MINUTE_MS), timeZone);
  if (wallAt - wallBefore <= MINUTE_MS) return false;
  for (let wall = wallBefore + MINUTE_MS; wall < wallAt; wall += MINUTE_MS) {
    for (const second of matcher.seconds) if (matcher.matchesWall(new Date(wall + second * 1000))) return true;
  }
  return false;
}

/** Whether `at` is a tick: named by the expression (the first of a repeated time), or the first instant after a gap that hid one. */
function isTick(at: Date, timeZone: string, matcher: Matcher): boolean {
  // The wall-clock test first: it is cheap, and it names every instant the expression does.
  if (matcher.matchesWall(new Date(wallClock(at, timeZone))) && matcher.matches(at)) return !repeatedWallTime(at, timeZone);
  return at.getUTCSeconds() === 0 && gapTickBefore(at, timeZone, matcher);
}

/**
 * Minutes that can hold a tick: every time zone's offset is a whole number of quarter hours, so a
 * UTC minute can only be one when it equals one of the expression's minutes modulo 15 (a weekly
 * expression costs ~700 checks over a week, not 10,080); a gap's first instant is on the hour.
 */
const candidateMinute = (minuteMs: number, quarterMinutes: Set<number>) => quarterMinutes.has((minuteMs / MINUTE_MS) % 15) || minuteMs % (15 * MINUTE_MS) === 0;

/** The first tick strictly after `after`, searched at most `horizonMs` ahead; null when none. */
export function nextTickAfter(expression: string, timeZone: string, after: Date, horizonMs = 366 * 24 * HOUR_MS): Date | null {
  const matcher = matcherFor(expression, timeZone);
  const until = after.getTime() + horizonMs;
  for (let minute = Math.floor(after.getTime() / MINUTE_MS) * MINUTE_MS; minute <= until; minute += MINUTE_MS) {
    if (!candidateMinute(minute, matcher.quarterMinutes)) continue;
    for (const second of matcher.seconds) {
      const at = new Date(minute + second * 1000);
      if (at.getTime() > after.getTime() && isTick(at, timeZone, matcher)) return at;
    }
  }
  return null;
}

/** The newest tick at or before `now`, searched back at most `lookbackMs`; null when none. */
export function lastTickAtOrBefore(expression: string, timeZone: string, now: Date, lookbackMs: number): Date | null {
  const matcher = matcherFor(expression, timeZone);
  const seconds = [...matcher.seconds].reverse();
  const oldest = now.getTime() - lookbackMs;
  for (let minute = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS; minute >= oldest - MINUTE_MS; minute -= MINUTE_MS) {
    if (!candidateMinute(minute, matcher.quarterMinutes)) continue;
    for (const second of seconds) {
      const at = new Date(minute + second * 1000);
      if (at.getTime() <= now.getTime() && at.getTime() >= oldest && isTick(at, timeZone, matcher)) return at;
    }
  }
  return null;
}
