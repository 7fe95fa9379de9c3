// When the scheduler tries a stopped run again, and what an idle scheduler costs the database.
import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { createLogger } from '../../server/http/logger.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { createManualClock } from '../../server/clock.ts';
import { DEFAULT_RESUME_POLICY, resumableTick, resumeDelayMs, shouldResume } from './resume.ts';
import { startDigestScheduler } from './scheduler.ts';


describe('the resume schedule', () => {
  it('first tries within 2 minutes, then doubles up to 30 minutes', () => {
    const waits = Array.from({ length: 8 }, (_, i) => resumeDelayMs(i + 1, DEFAULT_RESUME_POLICY) / 60_000);
    expect(waits).toEqual([1, 2, 4, 8, 16, 30, 30, 30]);
  });

  it('with the defaults, a provider down for 2 minutes from the scheduled minute is done within 8 minutes of its return', () => {
    // The scheduled run gives up after its own retries (~15 s); tries follow at +1, +3, +7 min.
    let at = 15_000;
    let attempt = 0;
    while (at < 2 * 60_000) at += resumeDelayMs(++attempt, DEFAULT_RESUME_POLICY);
    expect(at - 2 * 60_000).toBeLessThan(8 * 60_000);
    expect(at).toBe(15_000 + 60_000 + 120_000);
  });

  it('tries again after a stop or a lease in the way, not after a conclusive end, a failed pre-send check or a stop on request', () => {
    expect(shouldResume({ outcome: 'stopped', message: 'Stopped after sending Week of July 14, 2025 to 0 subscribers: the provider kept failing: …' })).toBe(true);
    expect(shouldResume({ outcome: 'stopped', message: 'Stopped: unexpected error: boom' })).toBe(true);
    expect(shouldResume({ outcome: 'locked', message: 'Nothing sent: another run is sending …' })).toBe(true);
    expect(shouldResume({ outcome: 'stopped', message: 'Nothing sent: the e-mail is 120 KB, over the 92 KB …' })).toBe(false);
    expect(shouldResume({ outcome: 'stopped', message: 'Resumed (try 2): Nothing sent: the e-mail is 120 KB …' })).toBe(false);
    expect(shouldResume({ outcome: 'stopped', message: 'Stopped after sending … to 200 subscribers: stopped on request. Run again …' })).toBe(false);
    for (const outcome of ['sent', 'already-sent', 'stale', 'unknown', 'no-recap', 'no-subscribers'] as const) expect(shouldResume({ outcome, message: '' })).toBe(false);
  });

  it('a try goes on until the next tick has come, and for a late tick until its catch-up deadline', () => {
    const tick = new Date('2026-11-23T09:00:00Z');
    const at = (iso: string, late = false) => resumableTick({ cron: '0 9 * * 1', timezone: 'UTC', tick, late, catchUpHours: 6, now: new Date(iso) });
    expect(at('2026-11-29T09:00:00Z')).toEqual({ go: true });
    expect(at('2026-11-30T09:00:00Z')).toMatchObject({ go: false, state: 'abandoned' });
    expect(at('2026-11-23T14:59:00Z', true)).toEqual({ go: true });
    expect(at('2026-11-23T15:01:00Z', true)).toMatchObject({ go: false, state: 'missed' });
  });
});

describe('an idle scheduler', () => {
  it('asks the database only at start-up (its schedule recorded, the newest tick looked up) and then nothing over half an hour', async () => {
    const store = await openPGliteStore(null);
    let calls = 0;
    const counted = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as Store;
    const clock = createManualClock(new Date('2026-03-04T10:00:00Z'));
    const scheduler = startDigestScheduler({
      cron: '0 9 * * 1',
      timezone: 'UTC',
      freshnessDays: 7,
      store: counted,
      mailer: new OutboxMailer({ dir: '/nonexistent', from: 'Launched Weekly <digest@localhost>' }),
      recaps,
      siteUrl: 'https://lw.test',
      unsubscribeSecret: 'resume-test-secret-0123456789abcdef0123456789',
      logger: createLogger({ level: 'silent', pretty: false }),
      clock,
    });
    try {
      await scheduler.idle();
      const atStart = calls;
      // The schedule's start, which schedule was in force before it, the record of ticks, and which
      // schedule was in force at the newest tick.
      expect(atStart).toBeLessThanOrEqual(4);
      await clock.advance(30 * 60_000);
      expect(calls).toBe(atStart);
      expect(scheduler.nextResume()).toBeNull();
    } finally {
      await scheduler.stop();
      await store.close();
    }
  });
});
