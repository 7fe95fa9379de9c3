// Group commit for signups. Under load, most of a signup's cost on the database path is not the
// row but the round trip: a statement written to the socket, the database woken to run it, the
// answer read back. Signups that arrive in the same turn of the event loop, or while the previous
// statement runs, are written together as one multi-row INSERT instead of queueing one by one.
// Each caller still gets its own answer only after the statement holding its row has committed,
// so a 201 still means "this address is stored". At low load nothing waits: a lone signup is
// written on its own, right after the turn that read it.
import type { SignupDecision, SignupRequest } from './types.ts';

export type SignupRow = SignupRequest;

export interface SignupWrites {
  /** One row, decided on its own (every rule applies). */
  one(row: SignupRow): Promise<SignupDecision>;
  /**
   * Several rows with distinct addresses in one statement, for the common case only: the
   * addresses it made active, with their ids. Every other row is then written with `one`.
   */
  many(rows: readonly SignupRow[]): Promise<Map<string, string>>;
  /** A row `many` did not activate (already there, or suppressed): every rule applies. */
  decide(row: SignupRow): Promise<SignupDecision>;
  /** Whether an error means the store is down (every row would fail alike). */
  isUnavailable(error: unknown): boolean;
}

interface Pending {
  row: SignupRow;
  resolve(result: SignupDecision): void;
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

  add(row: SignupRow): Promise<SignupDecision> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
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
      const group = byAddress.get(pending.row.email);
      if (group) group.push(pending);
      else byAddress.set(pending.row.email, [pending]);
    }
    const groups = [...byAddress.values()];
    const writeAlone = (group: Pending[], write = this.writes.one) =>
      write(group[0]!.row).then(
        (result) => settle(group, { result }),
        (error: unknown) => settle(group, { error }),
      );
    if (groups.length === 1) return writeAlone(groups[0]!);
    let activated: Map<string, string>;
    try {
      activated = await this.writes.many(groups.map((group) => group[0]!.row));
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
    // The rest already existed (or are suppressed): the signup function decides each.
    const rest: Pending[][] = [];
    for (const group of groups) {
      const id = activated.get(group[0]!.row.email);
      if (id === undefined) rest.push(group);
      else settle(group, { result: { outcome: 'subscribed', subscriberId: id } });
    }
    for (const group of rest) await writeAlone(group, this.writes.decide);
  }
}

/** What a second signup of the same address in the same moment hears: the first one's effect, nothing more. */
function asLater(decision: SignupDecision): SignupDecision {
  const outcome = decision.outcome === 'subscribed' ? 'already_subscribed' : decision.outcome === 'send_confirmation' ? 'nothing_to_send' : decision.outcome;
  return { ...decision, outcome };
}

/** The first caller for an address gets the outcome of its row; the others came second. */
function settle(group: Pending[], outcome: { result: SignupDecision } | { error: unknown }) {
  group.forEach((pending, index) => {
    if ('error' in outcome) pending.reject(outcome.error);
    else pending.resolve(index === 0 ? outcome.result : asLater(outcome.result));
  });
}
