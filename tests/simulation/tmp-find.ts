import fc from 'fast-check';
import { openPGliteDatabase } from './database.ts';
import { runAndCheck, WEEKS_PER_SCENARIO } from './mondays.ts';
import { planArbitrary } from './plan.ts';
const seed = Number(process.argv[2] ?? 1);
const count = Number(process.argv[3] ?? 20);
const db = await openPGliteDatabase();
const plans = fc.sample(planArbitrary(WEEKS_PER_SCENARIO), { seed, numRuns: count });
for (const [i, plan] of plans.entries()) {
  const t = performance.now();
  const c = await runAndCheck(db, plan);
  const kinds = new Set<string>();
  for (const v of c.violations) {
    if (v.detail.includes('not delivered within 24 hours')) kinds.add('HELD-24H');
    else if (v.detail.includes('invalid_idempotent_request')) kinds.add('KEY-REPEAT-409');
    else if (v.invariant.startsWith('no row sent') && v.detail.startsWith('outbox')) kinds.add('KEY-REPEAT-REPLAY');
    else if (v.invariant.startsWith('a week told missed')) kinds.add('RESUME-PAST-DEADLINE');
    else if (v.invariant.startsWith('each missed') && v.detail.includes('0 notices') && c.trace.includes('already taken up by another server')) kinds.add('CLAIM-VANISHED');
    else kinds.add(`${v.invariant}: ${v.detail.slice(0, 110)}`);
  }
  console.log(`SIM_SEED=${seed} SIM_PATH=${i} ${Math.round(performance.now() - t)}ms :: ${[...kinds].join(' | ')}`);
}
await db.close();
