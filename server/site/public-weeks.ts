// Which weeks the site shows right now. A week becomes public at its publication time
// (content/publication.ts) with no restart and no rebuild: each request asks for the current set,
// which costs a binary search over the weeks' publication instants, and whatever is built from a
// set (page data, page cache, feeds) is built once per set and kept until the next week turns
// public.
import { publicationInstant } from '../../content/publication.ts';
import type { Recap } from '../../content/schema.ts';
import { byDateNewestFirst } from '../../content/dates.ts';

export interface Publishing {
  /** Every week in content/recaps, public or coming. */
  recaps: readonly Recap[];
  clock: () => Date;
  /** DIGEST_TZ: a week without `publishAt` is public from its date at 09:00 here. */
  timeZone: string;
}

export interface PublicState<T> {
  /** The weeks public now, newest first. */
  recaps: readonly Recap[];
  /** What was built from exactly these weeks. */
  site: T;
  /** Seconds until the next week becomes public (null when none is coming): no cache may keep the current state longer. */
  secondsToNext: number | null;
}

/** Sets built and kept at once: the current one and a few before it, for a clock that moves back in tests. */
const KEPT_SETS = 3;

export interface PublishedSite<T> {
  current(): PublicState<T>;
  /** The week with this date, public or not. */
  weekOn(date: string): Recap | undefined;
  /** The week with this path, public or not. */
  weekAt(path: string): Recap | undefined;
  /** Whether a week is public now. */
  isPublicNow(recap: Recap): boolean;
}

export function publishedSite<T>({ recaps, clock, timeZone }: Publishing, build: (publicRecaps: readonly Recap[]) => T): PublishedSite<T> {
  const newestFirst = [...recaps].sort(byDateNewestFirst);
  const instants = new Map(newestFirst.map((recap) => [recap, publicationInstant(recap, timeZone).getTime()]));
  // Publication instants in order: the number of them passed is the key of the public set.
  const timeline = [...instants.values()].sort((a, b) => a - b);
  const built = new Map<number, { recaps: readonly Recap[]; site: T }>();
  const byDate = new Map(newestFirst.map((recap) => [recap.date, recap]));
  const byPath = new Map(newestFirst.map((recap) => [recap.path, recap]));

  function passed(now: number): number {
    let low = 0;
    let high = timeline.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (timeline[middle]! <= now) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  return {
    current() {
      const now = clock().getTime();
      const count = passed(now);
      let set = built.get(count);
      if (!set) {
        const publicRecaps = newestFirst.filter((recap) => instants.get(recap)! <= now);
        set = { recaps: publicRecaps, site: build(publicRecaps) };
        built.set(count, set);
        if (built.size > KEPT_SETS) built.delete(built.keys().next().value!);
      }
      const next = timeline[count];
      return { ...set, secondsToNext: next === undefined ? null : Math.max(0, Math.ceil((next - now) / 1000)) };
    },
    weekOn: (date) => byDate.get(date),
    weekAt: (path) => byPath.get(path),
    isPublicNow: (recap) => (instants.get(recap) ?? Infinity) <= clock().getTime(),
  };
}

/** A Cache-Control max-age no longer than `seconds`, nor than the time until the next week turns public. */
export function cappedMaxAge(seconds: number, secondsToNext: number | null): number {
  return secondsToNext === null ? seconds : Math.min(seconds, secondsToNext);
}
