// The store the server listens with while its database opens: calls wait for the open, a failed
// open fails them with its own error, and the wrapper is not a thenable (awaiting it must not wait
// for itself). The server-level behaviour is in tests/server/start-before-store.test.ts.
import { describe, expect, it } from 'vitest';
import { storeWhenOpen, type Store } from './index.ts';

/** A stand-in with one method, enough to see where calls go; the real stores are tested elsewhere. */
function fakeStore(calls: string[]): Store {
  return {
    backend: 'postgres',
    async countSubscribers() {
      calls.push('countSubscribers');
      return 7;
    },
  } as unknown as Store;
}

describe('storeWhenOpen', () => {
  it('answers a call made before the open once the store is open, and later calls straight away', async () => {
    const calls: string[] = [];
    let open!: (store: Store) => void;
    const store = storeWhenOpen('postgres', new Promise<Store>((resolve) => (open = resolve)));
    expect(store.backend).toBe('postgres');

    const early = store.countSubscribers();
    await Promise.resolve();
    expect(calls).toEqual([]);
    open(fakeStore(calls));
    await expect(early).resolves.toBe(7);
    await expect(store.countSubscribers()).resolves.toBe(7);
    expect(calls).toEqual(['countSubscribers', 'countSubscribers']);
  });

  it('fails the calls with the open’s own error when the store cannot open', async () => {
    const store = storeWhenOpen('pglite', Promise.reject(new Error('The embedded database is in use')));
    await expect(store.countSubscribers()).rejects.toThrow('The embedded database is in use');
  });

  it('is not a thenable, so awaiting it gives the store itself', async () => {
    const store = storeWhenOpen('postgres', new Promise<Store>(() => {}));
    expect(await Promise.resolve(store)).toBe(store);
  });
});
