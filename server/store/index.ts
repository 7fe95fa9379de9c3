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
