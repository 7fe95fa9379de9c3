// Picks the store backend from the configuration: Postgres, Supabase, or the embedded default.
import type { StoreConfig } from '../config.ts';
import type { Store } from './types.ts';

export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.kind) {
    case 'postgres': {
      const { openPostgresStore } = await import('./postgres.ts');
      return openPostgresStore(config.url);
    }
    case 'supabase': {
      const { openSupabaseStore } = await import('./supabase.ts');
      return openSupabaseStore(config);
    }
    case 'pglite': {
      const { openPGliteStore } = await import('./pglite.ts');
      return openPGliteStore(config.dataDir);
    }
  }
}

export * from './types.ts';

/**
 * The store while `opening` is still under way: every call waits for the open, then goes to the
 * opened store (directly, once it is open). The server listens with it before its database is up,
 * since pages need no database: readers get pages while the embedded database boots or the pool
 * connects, and a request that needs the store waits for it. Should the open fail, the caller
 * stops the process; the calls made meanwhile fail with the same error.
 */
export function storeWhenOpen(backend: Store['backend'], opening: Promise<Store>): Store {
  let opened: Store | undefined;
  opening.then(
    (store) => (opened = store),
    () => {}, // The caller handles the failure; this only keeps it from being unhandled here.
  );
  const forwarders = new Map<string, (...args: unknown[]) => unknown>();
  const forwarder = (name: string) => {
    const call = (store: Store) => (store as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!;
    return (...args: unknown[]) => (opened ? call(opened).apply(opened, args) : opening.then((store) => call(store).apply(store, args)));
  };
  return new Proxy({ backend } as Store, {
    get(_target, name) {
      // Not a thenable (`await store` must not wait on itself), and only the store's own methods.
      if (name === 'backend') return backend;
      if (typeof name !== 'string' || name === 'then') return undefined;
      let forward = forwarders.get(name);
      if (!forward) forwarders.set(name, (forward = forwarder(name)));
      return forward;
    },
  });
}
