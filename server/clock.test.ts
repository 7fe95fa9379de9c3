import { describe, expect, it } from 'vitest';
import { createManualClock, systemClock } from './clock.ts';

describe('the manual clock', () => {
  it('fires timers in time order, each at its own time, awaiting each before the next', async () => {
    const clock = createManualClock(new Date('2026-11-30T08:00:00Z'));
    const seen: string[] = [];
    clock.setTimer(async () => {
      seen.push(`b at ${clock.now().toISOString()}`);
      await new Promise((resolve) => setImmediate(resolve));
      seen.push('b done');
    }, 2_000);
    clock.setTimer(() => seen.push(`a at ${clock.now().toISOString()}`), 1_000);
    clock.setTimer(() => seen.push('c'), 5_000);
    await clock.advance(3_000);
    expect(seen).toEqual(['a at 2026-11-30T08:00:01.000Z', 'b at 2026-11-30T08:00:02.000Z', 'b done']);
    expect(clock.now().toISOString()).toBe('2026-11-30T08:00:03.000Z');
    expect(clock.pendingTimers()).toBe(1);
  });

  it('fires a timer set by a timer when it falls within the same advance, and never a cancelled one', async () => {
    const clock = createManualClock(new Date('2026-11-30T08:00:00Z'));
    const seen: number[] = [];
    const cancelled = clock.setTimer(() => seen.push(-1), 500);
    clock.setTimer(() => {
      seen.push(clock.now().getTime());
      clock.setTimer(() => seen.push(clock.now().getTime()), 1_000);
    }, 1_000);
    cancelled.cancel();
    await clock.advanceTo(new Date('2026-11-30T08:00:05Z'));
    const start = Date.parse('2026-11-30T08:00:00Z');
    expect(seen).toEqual([start + 1_000, start + 2_000]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('never moves backwards', async () => {
    const clock = createManualClock(new Date('2026-11-30T08:00:00Z'));
    await clock.advanceTo(new Date('2026-11-29T08:00:00Z'));
    expect(clock.now().toISOString()).toBe('2026-11-30T08:00:00.000Z');
  });
});

describe('the system clock', () => {
  it('tells the real time and fires a short timer, which a cancel stops', async () => {
    expect(Math.abs(systemClock.now().getTime() - Date.now())).toBeLessThan(1_000);
    const fired = await new Promise<boolean>((resolve) => {
      systemClock.setTimer(() => resolve(true), 5);
      const never = systemClock.setTimer(() => resolve(false), 1);
      never.cancel();
    });
    expect(fired).toBe(true);
  });
});
