// Every recap in content/recaps, checked against the schema and the rules across weeks, newest
// first. Imported from source (the tests, `npm run dev`, the tsx scripts) it checks them at import
// and throws a ContentError listing every problem. The compiled processes in dist/bin/ do not run
// this file: scripts/build-node.ts puts in its place the array this file gave when the build ran,
// as data. A start then only reads the weeks, and a build on invalid content fails with the same
// message. Checked at every start, the weeks would cost more CPU every year before the first page
// after a restart (the scale bench measures it at 24 and at 520 weeks).
import { byDateNewestFirst } from './dates.ts';
import { recapFiles } from './recaps/index.ts';
import type { Recap } from './schema.ts';
import { ContentError, validateRecaps } from './validate.ts';

function checkRecaps(): Recap[] {
  const result = validateRecaps(recapFiles);
  if (!result.ok) throw new ContentError(result.errors);
  return result.recaps.sort(byDateNewestFirst);
}

export const validatedRecaps: readonly Recap[] = checkRecaps();
