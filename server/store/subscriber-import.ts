// The subscriber import (bin/subscribers.ts) over public.import_subscribers
// (supabase/migrations/20261124003020_subscriber_import.sql), called by name through CallFunction.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

/** The state a row of an import file asks for. */
export type ImportState = 'active' | 'pending' | 'unsubscribed' | 'bounced' | 'complained';

export interface ImportRow {
  /** Normalised and validated. */
  email: string;
  state: ImportState;
  /** The address's keyed hashes, checked against the suppression list. */
  addressHashes: readonly string[];
}

/** How many rows had each outcome (see the migration). */
export interface ImportCounts {
  added: number;
  recordedLeft: number;
  present: number;
  leftAlone: number;
}

export interface SubscriberImportStore {
  /** Brings each row to its final state in one statement, all of them in one transaction. */
  importSubscribers(rows: readonly ImportRow[]): Promise<ImportCounts>;
}

const counts = z
  .object({ added: z.number(), recorded_left: z.number(), present: z.number(), left_alone: z.number() })
  .transform((c): ImportCounts => ({ added: c.added, recordedLeft: c.recorded_left, present: c.present, leftAlone: c.left_alone }));

export function subscriberImportStore(call: CallFunction): SubscriberImportStore {
  return {
    async importSubscribers(rows) {
      if (rows.length === 0) return { added: 0, recordedLeft: 0, present: 0, leftAlone: 0 };
      const answer = await call('import_subscribers', { p_rows: rows.map((row) => ({ email: row.email, state: row.state, hashes: row.addressHashes })) });
      return counts.parse(typeof answer === 'string' ? JSON.parse(answer) : answer);
    },
  };
}
