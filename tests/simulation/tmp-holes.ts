import { openPGliteDatabase } from './database.ts';
import { describeFailure, runAndCheck } from './mondays.ts';
import { KNOWN_HOLES } from './known-holes.ts';
const db = await openPGliteDatabase();
for (const hole of KNOWN_HOLES) {
  const c = await runAndCheck(db, hole.plan);
  console.log('=====', hole.name, c.violations.length);
  console.log(describeFailure(db, c).split('\n').filter((l) => !l.includes('outbox:')).join('\n'));
}
await db.close();
