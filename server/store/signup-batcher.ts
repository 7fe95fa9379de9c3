// Group commit for signups. Under load, most of a signup's cost on the database path is not the
// row but the round trip: a statement written to the socket, the database woken to run it, the
// answer read back. Signups that arrive in the same turn of the event loop, or while the previous
// statement runs, are written together as one multi-row INSERT instead of queueing one by one.
// Each caller still gets its own answer only after the statement holding its row has committed,
// so a 201 still means "this address is stored". At low load nothing waits: a lone signup is
// written on its own, right after the turn that read it.
import type { SignupResult } from './types.ts';

export interface SignupRow {
  email: string;
  source: string | null;
}

export interface SignupWrites {
  /** One row, as its own statement. */
  one(row: SignupRow): Promise<SignupResult>;
  /** Several rows with distinct addresses in one statement: the addresses it (re)activated. */
  many(rows: readonly SignupRow[]): Promise<Set<string>>;
  /** Whether an error means the store is down (every row would fail alike). */
  isUnavailable(error: unknown): boolean;
}

interface Pending extends SignupRow {
  resolve(result: SignupResult): void;
  reject(error: unknown): void;
}

/** A statement of 100 rows stays well under a millisecond of server time and any parameter limit. */
const MAX_SIGNUPS_PER_STATEMENT = 100;

export class SignupBatcher {
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  private pumpScheduled = false;

  /** `concurrency`: statements in flight at once (the connections signups may hold). */
  constructor(
    private readonly writes: SignupWrites,
    private readonly concurrency: number,
  ) {}

  add(email: string, source: string | null): Promise<SignupResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ email, source, resolve, reject });
      // Written after the requests the server is reading in this turn of the event loop, so the
      // ones that arrived together go together (setImmediate runs right after that I/O phase).
      if (!this.pumpScheduled) {
        this.pumpScheduled = true;
        setImmediate(() => {
          this.pumpScheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump() {
    while (this.inFlight < this.concurrency && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_SIGNUPS_PER_STATEMENT);
      this.inFlight++;
      void this.write(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    // The same address twice in one batch (a double click, two tabs): the first caller's row is
    // written and the others are told it is already there, as if they had come a moment later.
    const byAddress = new Map<string, Pending[]>();
    for (const pending of batch) {
      const group = byAddress.get(pending.email);
      if (group) group.push(pending);
      else byAddress.set(pending.email, [pending]);
    }
    const groups = [...byAddress.values()];
    const writeAlone = (group: Pending[]) =>
      this.writes.one(group[0]!).then(
        (result) => settle(group, { result }),
        (error: unknown) => settle(group, { error }),
      );
    if (groups.length === 1) return writeAlone(groups[0]!);
    let activated: Set<string>;
    try {
      activated = await this.writes.many(groups.map((group) => group[0]!));
    } catch (error) {
      if (this.writes.isUnavailable(error)) {
        for (const group of groups) settle(group, { error });
        return;
      }
      // Anything else is about a row, not the store: each is written on its own, so only that
      // row's callers hear of it.
      for (const group of groups) await writeAlone(group);
      return;
    }
    for (const group of groups) settle(group, { result: activated.has(group[0]!.email) ? 'subscribed' : 'already_subscribed' });
  }
}

/** The first caller for an address gets the outcome of its row; the others came second. */
function settle(group: Pending[], outcome: { result: SignupResult } | { error: unknown }) {
  group.forEach((pending, index) => {
    if ('error' in outcome) pending.reject(outcome.error);
    else pending.resolve(index === 0 ? outcome.result : 'already_subscribed');
  });
}
