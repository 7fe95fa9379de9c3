// One replica's view of the shared store: every call first brings the database's time up to the
// simulation's (database.ts), and the replica can be killed between any two calls. A kill is a
// process that dies: the call throws (before it reached the database, or after it committed with
// its answer lost), the replica is abandoned, and nothing it started reaches the store again; its
// leases stay until they expire.
import type { Store } from '../../server/store/types.ts';
import type { DatabaseTime } from './database.ts';

export class ReplicaKilled extends Error {}

/** Where a replica dies: at its `atCall`-th store call, before the call or after it. */
export interface KillPlan {
  atCall: number;
  when: 'before' | 'after';
}

export interface KillableStore {
  store: Store;
  alive(): boolean;
  /** Store calls made so far (the kill plan counts these). */
  calls(): number;
  /** Set when the kill fired, with the call it fired at. */
  killedAt(): string | null;
  /** Kills it now, between two calls (a kill from outside, such as a host going away). */
  kill(): void;
}

/** The last store call a replica completed before it died: what it had done that nobody saw the end of. */
export interface LastCall {
  name: string;
  args: readonly unknown[];
}

export function killableStore(base: Store, time: DatabaseTime, plan: KillPlan | null, onKill: (call: string, lastCompleted: LastCall | null) => void): KillableStore {
  let calls = 0;
  let killed: string | null = null;
  let lastCompleted: LastCall | null = null;
  const die = (call: string) => {
    if (killed === null) {
      killed = call;
      onKill(call, lastCompleted);
    }
    return new ReplicaKilled(`killed at store call ${calls} (${call})`);
  };
  const store = new Proxy(base, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || property === 'close' || property === 'backend') return value;
      const name = String(property);
      return async (...args: unknown[]) => {
        if (killed !== null) throw new ReplicaKilled(`replica already killed (${killed})`);
        calls++;
        const fatal = plan !== null && calls === plan.atCall;
        if (fatal && plan.when === 'before') throw die(name);
        // Before every call, not only those that compare with now(): a row a call inserts takes
        // the database's now() as its time, which must be the simulation's for its age to be true.
        await time.catchUp();
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        lastCompleted = { name, args };
        if (fatal) throw die(name);
        if (killed !== null) throw new ReplicaKilled(`replica killed during ${name}`);
        return result;
      };
    },
  });
  return {
    store,
    alive: () => killed === null,
    calls: () => calls,
    killedAt: () => killed,
    kill: () => void die('from outside'),
  };
}
