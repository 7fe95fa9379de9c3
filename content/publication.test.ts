import { describe, expect, it } from 'vitest';
import { recapSchema } from './schema.ts';
import { recaps } from './index.ts';
import { formatInstant, isPublic, publicationInstant, publicRecaps, wallClockInstant } from './publication.ts';

describe('publicationInstant', () => {
  it('is the week’s date at 09:00 in the digest’s time zone', () => {
    expect(publicationInstant({ date: '2026-11-30' }, 'UTC').toISOString()).toBe('2026-11-30T09:00:00.000Z');
    // Winter in Berlin is UTC+1, summer UTC+2; New York is UTC-5 / UTC-4.
    expect(publicationInstant({ date: '2026-11-30' }, 'Europe/Berlin').toISOString()).toBe('2026-11-30T08:00:00.000Z');
    expect(publicationInstant({ date: '2026-07-13' }, 'Europe/Berlin').toISOString()).toBe('2026-07-13T07:00:00.000Z');
    expect(publicationInstant({ date: '2026-11-30' }, 'America/New_York').toISOString()).toBe('2026-11-30T14:00:00.000Z');
    expect(publicationInstant({ date: '2026-11-30' }, 'Pacific/Auckland').toISOString()).toBe('2026-11-29T20:00:00.000Z');
  });

  it('follows daylight saving on the very day the clocks change', () => {
    // Europe springs forward at 01:00 UTC on 29 March 2026 and falls back on 25 October 2026.
    expect(publicationInstant({ date: '2026-03-29' }, 'Europe/London').toISOString()).toBe('2026-03-29T08:00:00.000Z');
    expect(publicationInstant({ date: '2026-10-25' }, 'Europe/London').toISOString()).toBe('2026-10-25T09:00:00.000Z');
    // 02:30 does not exist in New York on 8 March 2026: the first instant after the gap.
    expect(wallClockInstant('2026-03-08', 2, 'America/New_York').toISOString()).toBe('2026-03-08T07:00:00.000Z');
    // 01:00 happens twice on 1 November 2026: the first of the two.
    expect(wallClockInstant('2026-11-01', 1, 'America/New_York').toISOString()).toBe('2026-11-01T05:00:00.000Z');
  });

  it('is the file’s publishAt when it sets one', () => {
    expect(publicationInstant({ date: '2026-11-30', publishAt: '2026-11-27T16:30:00+01:00' }, 'UTC').toISOString()).toBe('2026-11-27T15:30:00.000Z');
  });
});

describe('isPublic', () => {
  const week = { date: '2026-11-30' };
  it('is false a millisecond before the time and true from the time on', () => {
    expect(isPublic(week, { now: new Date('2026-11-30T08:59:59.999Z'), timeZone: 'UTC' })).toBe(false);
    expect(isPublic(week, { now: new Date('2026-11-30T09:00:00.000Z'), timeZone: 'UTC' })).toBe(true);
    expect(isPublic(week, { now: new Date('2026-11-30T08:00:00.000Z'), timeZone: 'Europe/Berlin' })).toBe(true);
  });

  it('keeps every week of the repository public today, and hides the newest on its morning', () => {
    expect(publicRecaps(recaps, { now: new Date(), timeZone: 'UTC' })).toHaveLength(recaps.length);
    const newest = recaps[0]!;
    const morning = new Date(`${newest.date}T08:00:00Z`);
    expect(publicRecaps(recaps, { now: morning, timeZone: 'UTC' }).map((r) => r.date)).toEqual(recaps.slice(1).map((r) => r.date));
  });
});

describe('publishAt in a week’s file', () => {
  const base = { ...recaps[0]! };
  it('is optional and must be an instant with its offset', () => {
    expect(recapSchema.safeParse(base).success).toBe(true);
    expect(recapSchema.safeParse({ ...base, publishAt: '2025-07-14T07:00:00Z' }).success).toBe(true);
    for (const bad of ['2025-07-14', '2025-07-14T07:00:00', 'Monday at nine', '2025-02-30T07:00:00Z']) {
      const parsed = recapSchema.safeParse({ ...base, publishAt: bad });
      expect(parsed.success, bad).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/publishAt must be an ISO date and time with its offset/);
    }
  });
});

describe('formatInstant', () => {
  it('writes the wall clock of the zone, named by it', () => {
    const instant = new Date('2026-11-30T09:00:00Z');
    expect(formatInstant(instant, 'UTC')).toBe('Mon 30 Nov 2026 09:00 UTC');
    expect(formatInstant(instant, 'UTC', { year: false })).toBe('Mon 30 Nov 09:00 UTC');
    expect(formatInstant(instant, 'Europe/Berlin', { day: false })).toBe('10:00 Europe/Berlin');
  });
});
