import type { Store } from './types.ts';
export async function openSupabaseStore(_config: { url: string; anonKey: string; serviceRoleKey: string }): Promise<Store> {
  throw new Error('The Supabase backend is being written.');
}
