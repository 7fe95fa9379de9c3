// The newest DIGEST_CRON tick before a server starts, in the operator's time zone: the instant the
// catch-up asks the record of ticks about; and the next tick, which the scheduler's timer waits for,
// right across daylight-saving changes.
import { describe, expect, it } from 'vitest';
import { lastTickAtOrBefore, nextTickAfter } from './cron-time.ts';

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

describe('nextTickAfter', () => {
  it('is strictly after the instant given, in the zone given', () => {
    expect(nextTickAfter('0 9 * * 1', 'UTC', new Date('2026-11-23T09:00:00Z'))).toEqual(new Date('2026-11-30T09:00:00Z'));
    expect(nextTickAfter('0 9 * * 1', 'America/New_York', new Date('2026-11-01T00:00:00Z'))).toEqual(new Date('2026-11-02T14:00:00Z'));
    expect(nextTickAfter('*/5 * * * * *', 'UTC', new Date('2026-11-23T09:00:30Z'))).toEqual(new Date('2026-11-23T09:00:35Z'));
  });

  it('a time the clocks skip fires at the first instant after the gap; a time they repeat fires once', () => {
    // Lisbon, 29 March 2026: 01:00 becomes 02:00; 25 October 2026: 02:00 becomes 01:00.
    expect(nextTickAfter('30 1 * * *', 'Europe/Lisbon', new Date('2026-03-28T12:00:00Z'))).toEqual(new Date('2026-03-29T01:00:00Z'));
    expect(nextTickAfter('30 1 * * *', 'Europe/Lisbon', new Date('2026-03-29T01:00:00Z'))).toEqual(new Date('2026-03-30T00:30:00Z'));
    expect(nextTickAfter('30 1 * * *', 'Europe/Lisbon', new Date('2026-10-24T12:00:00Z'))).toEqual(new Date('2026-10-25T00:30:00Z'));
    expect(nextTickAfter('30 1 * * *', 'Europe/Lisbon', new Date('2026-10-25T00:30:00Z'))).toEqual(new Date('2026-10-26T01:30:00Z'));
    expect(lastTickAtOrBefore('30 1 * * *', 'Europe/Lisbon', new Date('2026-10-25T02:00:00Z'), WEEK)).toEqual(new Date('2026-10-25T00:30:00Z'));
  });
});
