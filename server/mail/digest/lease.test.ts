// The sending lease on a real (embedded) store: a renewal already on its way when the lease is
// released must not bring it back, or the next run would be told "locked" for a whole period.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../clock.ts';
import { openPGliteStore } from '../../store/pglite.ts';
import type { Store } from '../../store/types.ts';
import { SendingLease } from './lease.ts';

let store: Store;
beforeAll(async () => {
  store = await openPGliteStore(null);
});
afterAll(async () => {
  await store.close();
});

/** The same store, with every lease renewal reaching the database `ms` late (a slow network). */
function slowRenewals(real: Store, ms: number): Store {
  return new Proxy(real, {
    get(target, property, receiver) {
      if (property === 'acquireDigestLock') {
        return async (...args: Parameters<Store['acquireDigestLock']>) => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          return target.acquireDigestLock(...args);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('SendingLease', () => {
  it('is one holder’s at a time and free again once released', async () => {
    const first = new SendingLease(store, '2025-07-14', 60_000);
    const second = new SendingLease(store, '2025-07-14', 60_000);
    expect(await first.acquire()).toBe(true);
    expect(await second.acquire()).toBe(false);
    expect(await first.check()).toBeNull();
    await first.release();
    expect(await second.acquire()).toBe(true);
    await second.release();
  });

  it('cannot be renewed back into existence by a renewal in flight at release', async () => {
    const lease = new SendingLease(slowRenewals(store, 300), '2025-07-07', 60_000);
    expect(await lease.acquire()).toBe(true);
    const renewal = lease.renew(); // on its way, 300 ms late
    await lease.release();
    await renewal;
    await lease.renew(); // and none after release
    const next = new SendingLease(store, '2025-07-07', 60_000);
    expect(await next.acquire()).toBe(true);
    await next.release();
  });

  it('says the lease is lost once the database refuses a renewal (another holder took it over)', async () => {
    let calls = 0;
    const takenOver = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'acquireDigestLock') return async (...args: Parameters<Store['acquireDigestLock']>) => (calls++ === 0 ? target.acquireDigestLock(...args) : false);
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    let now = Date.now();
    const lease = new SendingLease(takenOver, '2025-06-30', 60_000, { now: () => new Date(now), setTimer: systemClock.setTimer });
    expect(await lease.acquire()).toBe(true);
    expect(await lease.check()).toBeNull();
    now += 21_000; // past a third of the lease: check renews, and the renewal is refused
    expect(await lease.check()).toMatch(/lost the sending lease/);
    await lease.release();
  });
});
