// Time as an argument. Everything that waits or asks the time on the Monday's path (the scheduler,
// catch-up, resume, the outbox worker, the digest, housekeeping and notices) takes one Clock, so a
// test or a simulation can run days of them in a second, in an order it chooses, by moving a
// manual clock forward instead of sleeping on the real one.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  now(): Date;
  /**
   * Calls `run` once, `ms` of this clock's time from now. A promise it returns is awaited by a
   * manual clock before it moves on, so work a timer starts ends before the next timer fires.
   */
  setTimer(run: () => unknown, ms: number): TimerHandle;
}

/** Node's timers take at most 2^31 - 1 ms; a longer wait is chained through shorter ones. */
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;

/** The real clock. Its timers never keep the process alive on their own (unref). */
export const systemClock: Clock = {
  now: () => new Date(),
  setTimer(run, ms) {
    let handle: NodeJS.Timeout;
    const due = Date.now() + Math.max(0, ms);
    const arm = () => {
      const left = due - Date.now();
      handle = setTimeout(() => (left > LONGEST_TIMEOUT_MS ? arm() : void run()), Math.min(Math.max(0, left), LONGEST_TIMEOUT_MS));
      handle.unref();
    };
    arm();
    return { cancel: () => clearTimeout(handle) };
  },
};

interface PendingTimer {
  due: number;
  order: number;
  run: () => unknown;
}

export interface ManualClock extends Clock {
  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way in time order (ties in
   * the order they were set), each at its own time and awaited before the next. A timer set while
   * advancing fires in the same call if it falls due within it.
   */
  advance(ms: number): Promise<void>;
  /** Moves time to `at` (never backwards), as advance does. */
  advanceTo(at: Date): Promise<void>;
  /** Timers set and not yet fired or cancelled. */
  pendingTimers(): number;
}

/** A clock that stands still until it is moved: for tests and the simulation. */
export function createManualClock(start: Date): ManualClock {
  let current = start.getTime();
  let order = 0;
  const timers = new Set<PendingTimer>();

  const nextDue = (until: number): PendingTimer | null => {
    let next: PendingTimer | null = null;
    for (const timer of timers) {
      if (timer.due > until) continue;
      if (!next || timer.due < next.due || (timer.due === next.due && timer.order < next.order)) next = timer;
    }
    return next;
  };

  const advanceTo = async (target: number) => {
    for (let timer = nextDue(target); timer; timer = nextDue(target)) {
      timers.delete(timer);
      current = Math.max(current, timer.due);
      await timer.run();
    }
    current = Math.max(current, target);
  };

  return {
    now: () => new Date(current),
    setTimer(run, ms) {
      const timer: PendingTimer = { due: current + Math.max(0, ms), order: order++, run };
      timers.add(timer);
      return { cancel: () => timers.delete(timer) };
    },
    advance: (ms) => advanceTo(current + Math.max(0, ms)),
    advanceTo: (at) => advanceTo(at.getTime()),
    pendingTimers: () => timers.size,
  };
}
