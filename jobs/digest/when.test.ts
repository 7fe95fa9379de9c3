import { describe, expect, it } from 'vitest';
import { comingWeeks, whenOf } from './when.ts';

const monday = { date: '2026-11-30' };
const schedule = { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 };

describe('whenOf', () => {
  it('says when the page is public and when the schedule sends it', () => {
    expect(whenOf(monday, schedule)).toMatchObject({
      line: 'public Mon 30 Nov 09:00 UTC, e-mail 09:00 UTC',
      warning: null,
      publicAt: new Date('2026-11-30T09:00:00Z'),
      emailAt: new Date('2026-11-30T09:00:00Z'),
    });
    expect(whenOf(monday, { ...schedule, cron: '30 10 * * 1' }).line).toBe('public Mon 30 Nov 09:00 UTC, e-mail 10:30 UTC');
    expect(whenOf(monday, { ...schedule, cron: '0 8 * * 2' }).line).toBe('public Mon 30 Nov 09:00 UTC, e-mail Tue 1 Dec 08:00 UTC');
    expect(whenOf(monday, { ...schedule, timezone: 'Europe/Berlin' }).line).toBe('public Mon 30 Nov 09:00 Europe/Berlin, e-mail 09:00 Europe/Berlin');
    expect(whenOf(monday, { ...schedule, cron: 'off' }).line).toBe('public Mon 30 Nov 09:00 UTC, e-mail not scheduled here (DIGEST_CRON=off)');
  });

  it('takes a publishAt of the Friday before: public then, e-mailed on Monday', () => {
    expect(whenOf({ ...monday, publishAt: '2026-11-27T16:00:00Z' }, schedule).line).toBe('public Fri 27 Nov 16:00 UTC, e-mail Mon 30 Nov 09:00 UTC');
  });

  it('warns when the e-mail would go out before the page is public', () => {
    const early = whenOf(monday, { ...schedule, cron: '0 7 * * *' });
    expect(early.line).toBe('public Mon 30 Nov 09:00 UTC, e-mail Tue 1 Dec 07:00 UTC');
    expect(early.warning).toBe(
      "the e-mail would go out before the page is public: DIGEST_CRON \"0 7 * * *\" runs at Mon 30 Nov 07:00 UTC, before the page is public at 09:00 UTC, so that run finds this week hidden and sends nothing new; its e-mail waits until Tue 1 Dec 07:00 UTC. Set publishAt: '2026-11-30T07:00:00.000Z' (or earlier) in content/recaps/2026-11-30.ts, or move DIGEST_CRON after 09:00 UTC.",
    );
    // Weekly at 07:00: the next run is a week later, when the week is no longer fresh.
    const never = whenOf(monday, { ...schedule, cron: '0 7 * * 1' });
    expect(never.emailAt).toBeNull();
    expect(never.line).toContain('no scheduled e-mail');
    expect(never.warning).toContain('runs at Mon 30 Nov 07:00 UTC, before the page is public at 09:00 UTC');
    expect(never.warning).not.toContain('waits until');
  });
});

describe('comingWeeks', () => {
  it('lists the weeks not public yet, oldest first', () => {
    const weeks = [{ date: '2026-11-23' }, { date: '2026-12-07' }, monday].map((week) => ({ ...week }) as never);
    expect(comingWeeks(weeks, new Date('2026-11-25T12:00:00Z'), schedule).map((week) => week.date)).toEqual(['2026-11-30', '2026-12-07']);
  });
});

describe('npm run new-recap', () => {
  it('says when the new week will be public and e-mailed, and warns of an e-mail before the page', async () => {
    const { whenLines } = await import('../../scripts/new-recap.ts');
    expect(whenLines('2026-11-30', schedule)).toEqual(['It will be public Mon 30 Nov 2026 09:00 UTC, e-mail 09:00 UTC.']);
    const early = whenLines('2026-11-30', { ...schedule, cron: '0 8 * * 1' });
    expect(early[1]).toMatch(/^warning: the e-mail would go out before the page is public: DIGEST_CRON "0 8 \* \* 1" runs at Mon 30 Nov 2026 08:00 UTC/);
  });
});

describe('npm run validate-content', () => {
  it('names each coming week’s file with when it will be public and sent, and its warning', async () => {
    const { comingWeekLines } = await import('./when.ts');
    const weeks = [whenOf(monday, schedule), whenOf({ date: '2026-12-07' }, { ...schedule, cron: '0 8 * * 1' })];
    const lines = comingWeekLines(weeks);
    expect(lines.info).toEqual([
      'content/recaps/2026-11-30.ts: coming: public Mon 30 Nov 09:00 UTC, e-mail 09:00 UTC',
      expect.stringMatching(/^content\/recaps\/2026-12-07\.ts: coming: public Mon 7 Dec 09:00 UTC, no scheduled e-mail/),
    ]);
    expect(lines.warnings).toEqual([expect.stringMatching(/^content\/recaps\/2026-12-07\.ts: warning: the e-mail would go out before the page is public/)]);
    expect(comingWeekLines([]).info).toEqual(['Every week is public; none is coming.']);
  });
});
