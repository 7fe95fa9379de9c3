// The key of the mailbox hashes (server/subscribers/subscriber-keys.ts), over the SQL function of
// supabase/migrations/20261124005020_mailbox_keys.sql: created once, at random, by the first server
// that asks, and kept in the database, so it is the same on every replica and no rotation of
// UNSUBSCRIBE_SECRET changes it.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';
import type { MailboxKeyStore } from './types.ts';

export function mailboxKeyStore(call: CallFunction): MailboxKeyStore {
  return {
    mailboxHashKey: async (candidate) => z.string().min(32).parse(await call('mailbox_hash_key', { p_candidate: candidate })),
  };
}
