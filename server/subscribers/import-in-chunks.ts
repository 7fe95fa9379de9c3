// The import of a subscriber file (bin/subscribers.ts reads and validates it): rows go to the
// store's import function a chunk at a time, one chunk after another. Each row reaches its final
// state in one statement and each chunk commits as a whole, so an import stopped anywhere (killed,
// or the store gone) leaves every address as it was or as the file says; running the same file
// again finishes the job, counting what the first run did as already there.
import type { ImportCounts, ImportState } from '../store/subscriber-import.ts';
import type { Store } from '../store/types.ts';
import type { SubscriberKeys } from './subscriber-keys.ts';

export const IMPORT_CHUNK_SIZE = 500;

export interface ImportFileRow {
  email: string;
  state: ImportState;
}

export async function importSubscriberRows(
  store: Pick<Store, 'importSubscribers'>,
  keys: Pick<SubscriberKeys, 'addressHashes'>,
  rows: readonly ImportFileRow[],
  options: { chunkSize?: number; onChunk?: (done: number, total: number) => void } = {},
): Promise<ImportCounts> {
  const chunkSize = options.chunkSize ?? IMPORT_CHUNK_SIZE;
  const totals: ImportCounts = { added: 0, recordedLeft: 0, present: 0, leftAlone: 0 };
  for (let start = 0; start < rows.length; start += chunkSize) {
    const chunk = await Promise.all(rows.slice(start, start + chunkSize).map(async (row) => ({ ...row, addressHashes: await keys.addressHashes(row.email) })));
    const counts = await store.importSubscribers(chunk);
    for (const key of Object.keys(totals) as (keyof ImportCounts)[]) totals[key] += counts[key];
    options.onChunk?.(Math.min(start + chunkSize, rows.length), rows.length);
  }
  return totals;
}
