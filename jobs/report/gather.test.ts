import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { chooseRecap } from '../../server/mail/digest/recap.ts';
import { recapForRun } from './gather.ts';

describe("the report's next run", () => {
  it('names the recap the scheduled digest would choose, at the same instant', () => {
    const cases = [
      ['2025-07-14T08:59:59Z', '2025-07-06'],
      ['2025-07-14T09:00:00Z', '2025-07-14'],
      ['2025-07-20T12:00:00Z', '2025-07-14'],
    ] as const;
    for (const [at, date] of cases) {
      const chosen = chooseRecap({ recaps, publication: { now: new Date(at), timeZone: 'UTC' }, scheduled: true, preview: false, freshnessDays: 30 });
      expect('recap' in chosen && chosen.recap.date, at).toBe(date);
      expect(recapForRun(recaps, new Date(at), 'UTC', 30), at).toEqual({ recap: 'recap' in chosen ? chosen.recap : null, reason: null });
    }
  });

  it('says why a run would send nothing: a stale newest recap (still named, for its checks), or none public yet', () => {
    const stale = recapForRun(recaps, new Date('2025-08-30T09:00:00Z'), 'UTC', 7);
    expect(stale.recap?.date).toBe('2025-07-14');
    expect(stale.reason).toBe(
      "the newest recap, Week of July 14, 2025, will be 47 days old and the schedule sends a recap only during the 7 days from its date (DIGEST_FRESHNESS_DAYS); add that week's recap to content/recaps",
    );
    expect(recapForRun(recaps, new Date('2020-01-06T09:00:00Z'), 'UTC', 7)).toEqual({ recap: null, reason: 'no recap is public by 2020-01-06' });
  });
});
