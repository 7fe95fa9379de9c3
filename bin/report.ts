// `npm run report [-- --out FILE | --json]`: writes the operator's report (default
// dist/report/index.html) and prints its headline figures, or with --json prints every figure as
// JSON instead. Exit 0 when done, 1 when the store or configuration fails, 2 for bad arguments.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { recaps } from '../content/index.ts';
import { configOrExit, readDotEnv, storeOrExit } from '../server/startup.ts';

const USAGE = `Usage: npm run report -- [--out FILE | --json]

Writes one self-contained HTML page with the list's health (subscribers over time, signups and
their source pages, every send with its bounce and complaint rates, what readers clicked, the next
scheduled run and its pre-send checks) and prints the headline figures.

  --out FILE   where to write the page (default dist/report/index.html)
  --json       print every figure of the report as JSON on stdout; writes no page
  -h, --help   show this help`;

function parseArguments(argv: string[]): { out: string; json: boolean } {
  try {
    const { values } = parseArgs({
      args: argv,
      options: { out: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    if (values.out !== undefined && values.out.trim() === '') throw new Error('--out needs a file name, e.g. --out report.html');
    if (values.out !== undefined && values.json) throw new Error('--json prints the figures instead of writing a page: use --out or --json, not both');
    return { out: resolve(values.out ?? 'dist/report/index.html'), json: values.json === true };
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function main() {
  const args = parseArguments(process.argv.slice(2));
  const [{ gatherReport }, { headlineFigures, renderReportHtml }] = await Promise.all([
    import('../jobs/report/gather.ts'),
    import('../jobs/report/render.tsx'),
  ]);
  readDotEnv();
  const config = await configOrExit('The report cannot run');
  const store = await storeOrExit(config);
  let data;
  try {
    data = await gatherReport({ store, recaps, now: new Date(), siteUrl: config.siteUrl, production: config.env === 'production', digest: config.digest });
  } finally {
    await store.close();
  }
  if (args.json) {
    console.log(JSON.stringify(data, null, 2));
    return;
  }
  const html = await renderReportHtml(data);
  await mkdir(dirname(args.out), { recursive: true });
  await writeFile(args.out, html);
  console.log(headlineFigures(data).join('\n'));
  console.log(`Report written to ${args.out}`);
}

await main();
