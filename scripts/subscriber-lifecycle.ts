// `npx tsx scripts/subscriber-lifecycle.ts`: writes docs/subscriber-lifecycle.md from the table in
// server/subscribers/lifecycle.ts, the one place the subscriber's life is written.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { lifecycleMarkdown } from '../server/subscribers/lifecycle.ts';

export const LIFECYCLE_DOC = fileURLToPath(new URL('../docs/subscriber-lifecycle.md', import.meta.url));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(LIFECYCLE_DOC, lifecycleMarkdown());
  console.log(`Wrote ${LIFECYCLE_DOC}`);
}
