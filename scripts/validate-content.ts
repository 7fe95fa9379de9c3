// `npm run validate-content`: refreshes the registry of week files, then checks every recap and
// prints each problem with its file and field. Exits 1 when anything is wrong.
import { writeRegistry } from './recap-registry.ts';

const files = await writeRegistry();
try {
  const { recaps } = await import('../content/index.ts');
  console.log(`${recaps.length} recaps valid (${files[0]} … ${files.at(-1)}).`);
} catch (error) {
  if (error instanceof Error && error.name === 'ContentError') {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
