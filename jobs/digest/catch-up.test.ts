// The newest DIGEST_CRON tick before a server starts, in the operator's time zone: the instant the
// catch-up asks the run history about.
import { describe, expect, it } from 'vitest';
import { lastTickAtOrBefore, ranFor } from './catch-up.ts';
import type { DigestRun } from '../../server/store/types.ts';

const WEEK = 7 * 24 * 3_600_000;

describe('lastTickAtOrBefore', () => {
  it('finds Monday 09:00 in UTC and in zones a half or three quarters of an hour off', () => {
    expect(lastTickAtOrBefore('0 9 * * 1', 'UTC', new Date('2026-11-27T12:00:00Z'), WEEK)).toEqual(new Date('2026-11-23T09:00:00Z'));
    expect(lastTickAtOrBefore('0 9 * * 1', 'Asia/Kolkata', new Date('2026-11-27T12:00:00Z'), WEEK)).toEqual(new Date('2026-11-23T03:30:00Z'));
    expect(lastTickAtOrBefore('45 * * * *', 'Asia/Kathmandu', new Date('2026-11-23T09:10:00Z'), WEEK)).toEqual(new Date('2026-11-23T09:00:00Z'));
  });

  it('counts the tick of this very second, and a seconds field', () => {
    expect(lastTickAtOrBefore('0 9 * * 1', 'UTC', new Date('2026-11-23T09:00:00Z'), WEEK)).toEqual(new Date('2026-11-23T09:00:00Z'));
    expect(lastTickAtOrBefore('30 5 9 * * 1', 'UTC', new Date('2026-11-23T09:06:00Z'), WEEK)).toEqual(new Date('2026-11-23T09:05:30Z'));
  });

  it('finds nothing older than the lookback', () => {
    expect(lastTickAtOrBefore('0 9 1 1 *', 'UTC', new Date('2026-11-27T12:00:00Z'), WEEK)).toBeNull();
    expect(lastTickAtOrBefore('0 9 * * 1', 'UTC', new Date('2026-11-27T12:00:00Z'), 3_600_000)).toBeNull();
  });
});

describe('ranFor', () => {
  const run = (kind: DigestRun['kind'], startedAt: string): DigestRun => ({ id: '1', kind, startedAt: new Date(startedAt), outcome: 'sent' });
  const tick = new Date('2026-11-23T09:00:00Z');
  it('a scheduled run from the tick on (or a hair before it) counts; a manual run or an older one does not', () => {
    expect(ranFor([run('scheduled', '2026-11-23T09:00:00.004Z')], tick)).toBe(true);
    expect(ranFor([run('scheduled', '2026-11-23T08:59:59.990Z')], tick)).toBe(true);
    expect(ranFor([run('manual', '2026-11-23T09:30:00Z')], tick)).toBe(false);
    expect(ranFor([run('scheduled', '2026-11-16T09:00:00Z')], tick)).toBe(false);
  });
});
