import { describe, expect, it } from 'vitest';
import { recaps } from '../../../content/index.ts';
import { chooseRecap, isoDateIn } from './recap.ts';

const base = { recaps, scheduled: false, preview: false, freshnessDays: 7 };
/** Noon UTC of a day: every week dated that day or before is public. */
const on = (day: string, timeZone = 'UTC') => ({ now: new Date(`${day}T12:00:00Z`), timeZone });

describe('chooseRecap', () => {
  it('takes the newest public recap', () => {
    const chosen = chooseRecap({ ...base, publication: on('2025-07-16') });
    expect(chosen).toMatchObject({ recap: { date: '2025-07-14' }, ref: { ageDays: 2 }, label: expect.stringContaining('July') });
  });

  it('takes a week by date or by path, and names a week it does not know', () => {
    expect(chooseRecap({ ...base, publication: on('2025-07-16'), recapWeek: '2025-07-06' })).toMatchObject({ recap: { date: '2025-07-06' } });
    expect(chooseRecap({ ...base, publication: on('2025-07-16'), recapWeek: 'weekly-recap-july-6' })).toMatchObject({ recap: { date: '2025-07-06' } });
    expect(chooseRecap({ ...base, publication: on('2025-07-16'), recapWeek: '1999-01-01' })).toMatchObject({ refused: 'unknown-recap', message: expect.stringContaining('"1999-01-01"') });
  });

  it('refuses a coming week unless previewed, and a stale one on the schedule only', () => {
    expect(chooseRecap({ ...base, publication: on('2025-07-10'), recapWeek: '2025-07-14' })).toMatchObject({
      refused: 'not-yet',
      message: 'Nothing sent: Week of July 14, 2025 is not public until Mon 14 Jul 2025 09:00 UTC. Preview it with --to or --dry-run.',
    });
    expect(chooseRecap({ ...base, publication: on('2025-07-10'), recapWeek: '2025-07-14', preview: true })).toMatchObject({ recap: { date: '2025-07-14' } });
    expect(chooseRecap({ ...base, publication: on('2025-07-10'), recapWeek: '2025-07-14', testRecipient: 'me@example.com' })).toMatchObject({ recap: { date: '2025-07-14' } });
    expect(chooseRecap({ ...base, publication: on('2025-08-30'), scheduled: true })).toMatchObject({ refused: 'stale', message: expect.stringContaining('npm run digest -- --recap 2025-07-14') });
    expect(chooseRecap({ ...base, publication: on('2025-08-30') })).toMatchObject({ recap: { date: '2025-07-14' } });
    expect(chooseRecap({ ...base, publication: on('2020-01-01') })).toMatchObject({ refused: 'no-recap' });
  });

  it('takes the previous week before the publication time and this one from it on', () => {
    const before = { now: new Date('2025-07-14T08:59:59Z'), timeZone: 'UTC' };
    const at = { now: new Date('2025-07-14T09:00:00Z'), timeZone: 'UTC' };
    for (const mode of [{ scheduled: true, freshnessDays: 30 }, { preview: true }, {}]) {
      expect(chooseRecap({ ...base, ...mode, publication: before }), JSON.stringify(mode)).toMatchObject({ recap: { date: '2025-07-06' } });
      expect(chooseRecap({ ...base, ...mode, publication: at }), JSON.stringify(mode)).toMatchObject({ recap: { date: '2025-07-14' } });
    }
    // A week published early by its file is chosen from that time.
    const early = recaps.map((recap) => (recap.date === '2025-07-14' ? { ...recap, publishAt: '2025-07-11T16:00:00Z' } : recap));
    expect(chooseRecap({ ...base, recaps: early, publication: { now: new Date('2025-07-12T00:00:00Z'), timeZone: 'UTC' } })).toMatchObject({ recap: { date: '2025-07-14' } });
    // 09:00 in Tokyo is 00:00 UTC.
    expect(chooseRecap({ ...base, publication: { now: new Date('2025-07-14T00:00:00Z'), timeZone: 'Asia/Tokyo' } })).toMatchObject({ recap: { date: '2025-07-14' } });
  });

  it('reads "today" on the given time zone’s calendar', () => {
    const sundayNightUtc = new Date('2025-07-13T20:00:00Z');
    expect(isoDateIn(sundayNightUtc, 'UTC')).toBe('2025-07-13');
    expect(isoDateIn(sundayNightUtc, 'Asia/Tokyo')).toBe('2025-07-14');
  });
});
