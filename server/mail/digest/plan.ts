// Planning: who is next. Candidates come from the database already filtered (active, without this
// recap in the ledger, in no open batch of it), in id order, a page at a time; they become a batch
// only when writeDigestBatch commits them, which drops whoever left in between.
import type { DigestStore, Subscriber } from '../../store/types.ts';

export const DEFAULT_PAGE_SIZE = 500;

/** The candidates, `size` at a time (the last group may be smaller). */
export async function* candidateGroups(store: DigestStore, recapDate: string, size: number, pageSize = DEFAULT_PAGE_SIZE): AsyncGenerator<Subscriber[]> {
  let after: string | null = null;
  let group: Subscriber[] = [];
  for (;;) {
    const page: Subscriber[] = await store.listUndelivered(recapDate, after, pageSize);
    for (const subscriber of page) {
      group.push(subscriber);
      if (group.length === size) {
        yield group;
        group = [];
      }
    }
    if (page.length < pageSize) break;
    after = page.at(-1)!.id;
  }
  if (group.length > 0) yield group;
}
