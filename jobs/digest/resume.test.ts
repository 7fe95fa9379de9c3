// When the scheduler tries a stopped run again, and what an idle scheduler costs the database.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recaps } from '../../content/index.ts';
import { createLogger } from '../../server/http/logger.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { DigestRun, Store } from '../../server/store/types.ts';
import { DEFAULT_RESUME_POLICY, interruptedScheduledRun, resumeDelayMs, shouldResume } from './resume.ts';
import { startDigestScheduler } from './scheduler.ts';

const run = (kind: DigestRun['kind'], outcome: string | null, message = ''): DigestRun => ({ id: String(Math.random()), kind, startedAt: new Date(), outcome, message });

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

  it('at start-up resumes the last scheduled run when it was killed, stopped (on request too) or locked out, and nothing else', () => {
    expect(interruptedScheduledRun([run('manual', null), run('scheduled', null)])?.outcome).toBeNull();
    expect(interruptedScheduledRun([run('scheduled', 'stopped', 'Stopped after …: stopped on request. Run again …')])).not.toBeNull();
    expect(interruptedScheduledRun([run('scheduled', 'locked', 'Nothing sent: another run …')])).not.toBeNull();
    expect(interruptedScheduledRun([run('scheduled', 'sent'), run('scheduled', null)])).toBeNull();
    expect(interruptedScheduledRun([run('scheduled', 'stale')])).toBeNull();
    expect(interruptedScheduledRun([run('manual', 'stopped', 'Stopped: …')])).toBeNull();
    expect(interruptedScheduledRun([])).toBeNull();
  });
});

describe('an idle scheduler', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks the database once at start-up and then nothing: at most one query a minute, over half an hour', async () => {
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
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now: new Date('2026-03-04T10:00:00Z') });
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
    });
    try {
      await vi.advanceTimersByTimeAsync(30 * 60_000);
      expect(calls).toBe(1);
      expect(scheduler.nextResume()).toBeNull();
    } finally {
      vi.useRealTimers();
      await scheduler.stop();
      await store.close();
    }
  });
});
