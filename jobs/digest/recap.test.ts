import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { chooseRecap, isoDateIn } from './recap.ts';

const base = { recaps, scheduled: false, preview: false, freshnessDays: 7 };

describe('chooseRecap', () => {
  it('takes the newest recap whose date has come', () => {
    const chosen = chooseRecap({ ...base, today: '2025-07-16' });
    expect(chosen).toMatchObject({ recap: { date: '2025-07-14' }, ref: { ageDays: 2 }, label: expect.stringContaining('July') });
  });

  it('takes a week by date or by path, and names a week it does not know', () => {
    expect(chooseRecap({ ...base, today: '2025-07-16', recapWeek: '2025-07-06' })).toMatchObject({ recap: { date: '2025-07-06' } });
    expect(chooseRecap({ ...base, today: '2025-07-16', recapWeek: 'weekly-recap-july-6' })).toMatchObject({ recap: { date: '2025-07-06' } });
    expect(chooseRecap({ ...base, today: '2025-07-16', recapWeek: '1999-01-01' })).toMatchObject({ refused: 'unknown-recap', message: expect.stringContaining('"1999-01-01"') });
  });

  it('refuses a future week unless previewed, and a stale one on the schedule only', () => {
    expect(chooseRecap({ ...base, today: '2025-07-10', recapWeek: '2025-07-14' })).toMatchObject({ refused: 'not-yet' });
    expect(chooseRecap({ ...base, today: '2025-07-10', recapWeek: '2025-07-14', preview: true })).toMatchObject({ recap: { date: '2025-07-14' } });
    expect(chooseRecap({ ...base, today: '2025-08-30', scheduled: true })).toMatchObject({ refused: 'stale', message: expect.stringContaining('npm run digest -- --recap 2025-07-14') });
    expect(chooseRecap({ ...base, today: '2025-08-30' })).toMatchObject({ recap: { date: '2025-07-14' } });
    expect(chooseRecap({ ...base, today: '2020-01-01' })).toMatchObject({ refused: 'no-recap' });
  });

  it('reads "today" on the given time zone’s calendar', () => {
    const sundayNightUtc = new Date('2025-07-13T20:00:00Z');
    expect(isoDateIn(sundayNightUtc, 'UTC')).toBe('2025-07-13');
    expect(isoDateIn(sundayNightUtc, 'Asia/Tokyo')).toBe('2025-07-14');
  });
});
