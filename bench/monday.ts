// `npm run bench -- monday`: the simulation of tests/simulation/ run long. MONDAY_BENCH_MONDAYS
// (default 100,000) simulated Mondays on PGlite, in scenarios of several weeks drawn from the seed
// MONDAY_BENCH_SEED (default 1), every invariant checked after each; prints Mondays per second,
// the scenarios that broke an invariant by invariant, and for the first of them the command that
// replays it in the test (SIM_SEED and SIM_PATH). Prints only: a long run's figures go into
// bench/RESULTS.md by hand, with the machine's load beside them.
//
// Outside Vitest the digest's e-mail is rendered on every run (the test renders it once per week),
// so a Monday here costs more than in the test; the behaviour simulated is the same.
import { openPGliteDatabase } from '../tests/simulation/database.ts';
import { describeFailure, replayCommand, runAndCheck, tallyMondays, WEEKS_PER_SCENARIO, type Tally } from '../tests/simulation/mondays.ts';
import fc from 'fast-check';
import { planArbitrary } from '../tests/simulation/plan.ts';

const MONDAYS = Number(process.env.MONDAY_BENCH_MONDAYS ?? 100_000);
const SEED = Number(process.env.MONDAY_BENCH_SEED ?? 1);
const SHOWN_FAILURES = 10;

function progressLine(tally: Tally, started: number): string {
  const seconds = (performance.now() - started) / 1000;
  return `${tally.mondays.toLocaleString('en-US')} Mondays in ${seconds.toFixed(1)} s (${(tally.mondays / seconds).toFixed(1)} Mondays/s), ${tally.failed.length} of ${tally.scenarios} scenarios broke an invariant`;
}

export async function runMondayBench(): Promise<Tally> {
  if (!Number.isInteger(MONDAYS) || MONDAYS < 1) throw new Error('MONDAY_BENCH_MONDAYS must be a positive whole number');
  const db = await openPGliteDatabase();
  const started = performance.now();
  let lastPrinted = started;
  try {
    const tally = await tallyMondays(db, MONDAYS, SEED, (running) => {
      if (performance.now() - lastPrinted < 10_000) return;
      lastPrinted = performance.now();
      console.error(progressLine(running, started));
    });
    console.log(progressLine(tally, started));
    for (const [invariant, scenarios] of [...tally.byInvariant].sort((a, b) => b[1] - a[1])) console.log(`  ${invariant}: ${scenarios} scenarios`);
    for (const failure of tally.failed.slice(0, SHOWN_FAILURES)) {
      console.log(`  ${replayCommand('PGlite', failure.seed, failure.path)}   (${failure.violations.length} violations)`);
    }
    const first = tally.failed[0];
    if (first) {
      const plan = fc.sample(planArbitrary(WEEKS_PER_SCENARIO), { seed: first.seed, numRuns: Number(first.path) + 1 }).at(-1)!;
      console.log(describeFailure(db, await runAndCheck(db, plan)));
    }
    return tally;
  } finally {
    await db.close();
  }
}
