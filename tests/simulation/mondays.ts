// Many simulated Mondays on one database: fast-check draws the plans, each is run and checked, and
// a failure names what to replay (fast-check's seed and path, SIM_SEED=… SIM_PATH=…) with the
// scenario's own log. The test suite stops at the first failure; the bench counts them all.
import fc from 'fast-check';
import type { SimDatabase } from './database.ts';
import { checkInvariants, type Violation } from './invariants.ts';
import { planArbitrary, type Plan } from './plan.ts';
import { runScenario } from './scenario.ts';

export const WEEKS_PER_SCENARIO = 6;

export interface Replay {
  seed: number;
  path?: string;
}

/** SIM_SEED and SIM_PATH from the environment: one scenario to replay, as a failure printed it. */
export function replayFromEnvironment(env: NodeJS.ProcessEnv = process.env): Replay | null {
  if (!env.SIM_SEED || env.SIM_SEED === 'random') return null;
  const seed = Number(env.SIM_SEED);
  if (!Number.isInteger(seed)) throw new Error(`SIM_SEED must be an integer or "random", not "${env.SIM_SEED}"`);
  return { seed, path: env.SIM_PATH || undefined };
}

const DEFAULT_SEED = 20261128;

/**
 * The seed of the Mondays run when none is replayed: the same plans in every run unless
 * SIM_SEED=random asks for new ones, so a red test suite is the change's doing and new ground is
 * searched on purpose.
 */
const seedOption = (env: NodeJS.ProcessEnv = process.env): { seed?: number } => (env.SIM_SEED === 'random' ? {} : { seed: DEFAULT_SEED });

/** The command that runs one stretch again on `store`, by fast-check's seed and path. */
export function replayCommand(store: SimDatabase['name'], seed: number, path: string): string {
  return `SIM_SEED=${seed} SIM_PATH=${path} npx vitest run tests/simulation/monday-${store === 'PGlite' ? 'pglite' : 'postgres'}.test.ts -t "replayed stretch"`;
}

export interface Checked {
  plan: Plan;
  violations: Violation[];
  trace: string;
}

export async function runAndCheck(db: SimDatabase, plan: Plan): Promise<Checked> {
  const run = await runScenario(db, plan);
  try {
    const violations = await checkInvariants(db, run);
    return { plan, violations, trace: run.trace.render() };
  } finally {
    await run.releaseTime();
  }
}

export function describeFailure(db: SimDatabase, checked: Checked): string {
  return [
    `${checked.violations.length} invariant(s) broken on ${db.name}:`,
    ...checked.violations.map((v) => `  - ${v.invariant}: ${v.detail}`),
    `plan: ${JSON.stringify(checked.plan)}`,
    'event log:',
    checked.trace,
  ].join('\n');
}

/**
 * Runs `mondays` simulated Mondays (whole scenarios of WEEKS_PER_SCENARIO each) and throws at the
 * first broken invariant, with fast-check's seed and path for SIM_SEED and SIM_PATH.
 */
export async function assertMondays(db: SimDatabase, mondays: number, replay: Replay | null = null): Promise<void> {
  const property = fc.asyncProperty(planArbitrary(WEEKS_PER_SCENARIO), async (plan) => {
    const checked = await runAndCheck(db, plan);
    if (checked.violations.length > 0) throw new Error(describeFailure(db, checked));
  });
  const details = await fc.check(property, {
    numRuns: replay ? 1 : Math.ceil(mondays / WEEKS_PER_SCENARIO),
    ...(replay ? { seed: replay.seed, path: replay.path } : seedOption()),
    endOnFailure: true,
  });
  if (!details.failed) return;
  const replayLine = `Replay: ${replayCommand(db.name, details.seed, details.counterexamplePath ?? '')}`;
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(`${replayLine}\n${cause}`);
}

export interface Tally {
  mondays: number;
  scenarios: number;
  failed: { seed: number; path: string; violations: Violation[] }[];
  byInvariant: Map<string, number>;
}

/** Every scenario of a seed's sequence, each checked; failures counted, not thrown (the bench). */
export async function tallyMondays(db: SimDatabase, mondays: number, seed: number, onScenario?: (tally: Tally) => void): Promise<Tally> {
  const scenarios = Math.ceil(mondays / WEEKS_PER_SCENARIO);
  const plans = fc.sample(planArbitrary(WEEKS_PER_SCENARIO), { seed, numRuns: scenarios });
  const tally: Tally = { mondays: 0, scenarios: 0, failed: [], byInvariant: new Map() };
  for (const [index, plan] of plans.entries()) {
    const checked = await runAndCheck(db, plan);
    tally.scenarios++;
    tally.mondays += plan.weeks.length;
    if (checked.violations.length > 0) {
      tally.failed.push({ seed, path: String(index), violations: checked.violations });
      for (const invariant of new Set(checked.violations.map((v) => v.invariant))) tally.byInvariant.set(invariant, (tally.byInvariant.get(invariant) ?? 0) + 1);
    }
    onScenario?.(tally);
  }
  return tally;
}
