// The signup operations that know about mailboxes, over the SQL functions of
// supabase/migrations/20261124005020_mailbox_keys.sql, called by name (CallFunction) so that the
// SQL store and the Supabase store share one implementation: the key of the mailbox hashes, and
// single mode's group commit, which leaves out any address whose hashes are on the suppression list.
import { z } from 'zod';
import type { CallFunction } from './digest-batches.ts';
import type { SignupRow } from './signup-batcher.ts';

export interface MailboxSignupStore {
  /**
   * The key of the mailbox hashes (server/subscriber-keys.ts): the one stored in the database, or
   * `candidate` when none is stored yet, which is then kept for good.
   */
  mailboxHashKey(candidate: string): Promise<string>;
  /** Gives back the confirmation throttle a signup claimed, the row's and (when given) its mailbox's. */
  releaseConfirmation(id: string, mailboxHash: string | null): Promise<void>;
  /** Single-mode rows with distinct addresses in one statement: the addresses it made active, with their ids. */
  insertActive(rows: readonly SignupRow[]): Promise<Map<string, string>>;
}

const activated = z.array(z.object({ id: z.union([z.string(), z.number()]).transform(String), email: z.string() }));
const parseJson = (value: unknown) => (typeof value === 'string' ? (JSON.parse(value) as unknown) : value);

export function mailboxSignupStore(call: CallFunction): MailboxSignupStore {
  return {
    async mailboxHashKey(candidate) {
      return z.string().min(32).parse(await call('mailbox_hash_key', { p_candidate: candidate }));
    },
    async releaseConfirmation(id, mailboxHash) {
      await call('release_confirmation', { p_id: id, p_mailbox_hash: mailboxHash });
    },
    async insertActive(rows) {
      const answer = await call('signup_insert_active', {
        p_rows: rows.map((row) => ({ email: row.email, source: row.source, network_hash: row.networkHash, hashes: row.addressHashes })),
      });
      return new Map(activated.parse(parseJson(answer)).map((row) => [row.email, row.id]));
    },
  };
}
