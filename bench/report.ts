// The operator's report on PostgreSQL at 100,000 and at 1,000,000 subscribers with a year of
// history, 10 recaps sent to ~80,000 each and 2,000 webhook events: the store's snapshot (one SQL
// function, the report's data) and the whole `gather + render` (what `npm run report` does).
// Goals: report data ≤ 1 s at both sizes; the whole report page ≤ 3 s at 1,000,000.
//   npm run bench -- report
// With `--before REF` the REF tree's own store, migrations and report code (imported from its folder
// through tsx) run on a PostgreSQL of their own seeded alike, the rounds alternating between trees.
// Knobs: BENCH_REPORT_SIZES (default 100000,1000000), BENCH_ROUNDS (default 3; medians),
// BENCH_REPORT_PRINT_ONLY=1 (print instead of writing to bench/RESULTS.md).
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { recaps as Recaps } from '../content/index.ts';
import type { gatherReport as GatherReport } from '../jobs/report/gather.ts';
import type { renderReportHtml as RenderReportHtml } from '../jobs/report/render.tsx';
import { createPgClient, type openPostgresStore as OpenPostgresStore } from '../server/store/postgres.ts';
import { startOwnPostgres, type OwnPostgres } from '../scripts/own-postgres.ts';
import { benchCommand, comparisonTable } from './support/compare.ts';
import { goalLines, type Goal } from './support/goals.ts';
import { recordResults } from './support/results.ts';
import { currentTree, type Tree } from './support/tree.ts';

const SIZES = (process.env.BENCH_REPORT_SIZES ?? '100000,1000000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (n: number) => `${n.toFixed(0)} ms`;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** A year of list in set-based statements (generate_series, no loop over rows): signups over 52 weeks, a fifth of them gone a few weeks later. */
async function seed(sql: ReturnType<typeof createPgClient>, subscribers: number): Promise<void> {
  await sql.query(
    `insert into public.email_signups (email, source, created_at)
     select 'reader' || i || '@bench.test', (array['/', '/archive', '/about', '/weekly-recap-july-14'])[1 + i % 4],
            now() - (i % 52) * interval '1 week'
     from generate_series(1, $1::int) as i`,
    [subscribers],
  );
  await sql.query(`update public.email_signups set unsubscribed_at = created_at + interval '3 weeks', unsubscribe_reason = (array['unsubscribed','bounced','complained'])[1 + (length(email) % 3)]
                   where right(split_part(email, '@', 1), 1) in ('3', '7') and created_at < now() - interval '3 weeks'`);
  await sql.query(`update public.subscriber_state_history h set changed_at = case when h.state = 'active' then s.created_at else s.unsubscribed_at end
                   from public.email_signups s where s.id::text = h.subscriber_id`);
  // The ten recaps in one statement: each sent to up to 80,000 of those subscribed by then.
  await sql.query(
    `insert into public.digest_deliveries (recap_date, subscriber_id, provider_message_id, sent_at)
     select date '2025-07-14' - week * 7, s.id::text, 'msg-' || week || '-' || s.id, now() - week * interval '1 week'
     from generate_series(0, 9) as week
     cross join lateral (select id from public.email_signups where created_at < now() - week * interval '1 week' limit 80000) s`,
  );
  await sql.query(
    `insert into public.email_events (svix_id, event_type, provider_message_id, subscriber_id, occurred_at)
     select 'svix-' || n, case when n % 5 = 0 then 'email.complained' else 'email.bounced' end, provider_message_id, subscriber_id, now()
     from (select row_number() over () as n, provider_message_id, subscriber_id from public.digest_deliveries limit 2000) d`,
  );
  await sql.query('vacuum analyze');
}

/** What the bench runs of a tree, imported from that tree's folder: its store (with its migrations), its report and its recaps. */
interface ReportCode {
  openPostgresStore: typeof OpenPostgresStore;
  gatherReport: typeof GatherReport;
  renderReportHtml: typeof RenderReportHtml;
  recaps: typeof Recaps;
}

async function reportCode(tree: Tree): Promise<ReportCode> {
  const [store, gather, render, content] = (await Promise.all([tree.load('server/store/postgres.ts'), tree.load('jobs/report/gather.ts'), tree.load('jobs/report/render.tsx'), tree.load('content/index.ts')])) as [
    { openPostgresStore: typeof OpenPostgresStore },
    { gatherReport: typeof GatherReport },
    { renderReportHtml: typeof RenderReportHtml },
    { recaps: typeof Recaps },
  ];
  return { openPostgresStore: store.openPostgresStore, gatherReport: gather.gatherReport, renderReportHtml: render.renderReportHtml, recaps: content.recaps };
}

interface SizeResult {
  subscribers: number;
  seededMs: number;
  history: number;
  deliveries: number;
  snapshotMs: number[];
  wholeMs: number[];
  weeks: number;
}

/** One tree's database at one size: migrated by the tree's own store, then seeded. */
interface Seeded {
  tree: Tree;
  code: ReportCode;
  postgres: OwnPostgres;
  store: Awaited<ReturnType<typeof OpenPostgresStore>>;
  sql: ReturnType<typeof createPgClient>;
  result: SizeResult;
}

async function seeded(tree: Tree, code: ReportCode, subscribers: number): Promise<Seeded> {
  const postgres = await startOwnPostgres({ maxConnections: 50 });
  const store = await code.openPostgresStore(postgres.url);
  const sql = createPgClient(postgres.url, { max: 2 });
  const seededMs = await timed(() => seed(sql, subscribers));
  const counts = await sql.query<{ history: number; deliveries: number }>(
    'select (select count(*)::int from public.subscriber_state_history) as history, (select count(*)::int from public.digest_deliveries) as deliveries',
  );
  return { tree, code, postgres, store, sql, result: { subscribers, seededMs, ...counts.rows[0]!, snapshotMs: [], wholeMs: [], weeks: 0 } };
}

/** Each tree at one size, the rounds alternating between them. */
async function measure(trees: { tree: Tree; code: ReportCode }[], subscribers: number): Promise<SizeResult[]> {
  const databases: Seeded[] = [];
  try {
    for (const { tree, code } of trees) databases.push(await seeded(tree, code, subscribers));
    for (let round = 0; round < ROUNDS; round++) {
      for (const { store, code, result } of databases) {
        result.snapshotMs.push(await timed(async () => (result.weeks = (await store.reportSnapshot(52)).weeks.length)));
        result.wholeMs.push(
          await timed(async () => {
            const data = await code.gatherReport({ store, recaps: code.recaps, now: new Date(), siteUrl: 'https://launchedweekly.com', production: true, digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 } });
            await code.renderReportHtml(data);
          }),
        );
      }
    }
    for (const { tree, result: r } of databases) {
      console.error(`${trees.length > 1 ? `${tree.label}: ` : ''}${subscribers.toLocaleString('en-US')} subscribers: seeded in ${ms(r.seededMs)}, data ${r.snapshotMs.map(ms).join(', ')}, whole ${r.wholeMs.map(ms).join(', ')}`);
    }
    return databases.map((database) => database.result);
  } finally {
    for (const { sql, store, postgres } of databases) {
      await sql.close();
      await store.close();
      await postgres.destroy();
    }
  }
}

export async function runReportBench(before?: Tree): Promise<void> {
  const loadBefore = loadavg()[0]!.toFixed(2);
  const trees = await Promise.all((before ? [before, currentTree()] : [currentTree()]).map(async (tree) => ({ tree, code: await reportCode(tree) })));
  // Per size, one result per tree (before first when there is one).
  const bySize: SizeResult[][] = [];
  for (const size of SIZES) bySize.push(await measure(trees, size));
  const results = bySize.map((perTree) => perTree.at(-1)!);
  const n = (value: number) => value.toLocaleString('en-US');
  const goals: Goal[] = results.flatMap((r) => [
    { what: `report data at ${n(r.subscribers)}`, value: Math.round(median(r.snapshotMs)), is: '≤', target: 1000, unit: 'ms' } satisfies Goal,
    ...(r.subscribers >= 1_000_000 ? [{ what: `whole report page at ${n(r.subscribers)}`, value: Math.round(median(r.wholeMs)), is: '≤', target: 3000, unit: 'ms' } satisfies Goal] : []),
  ]);
  const row = (r: SizeResult, tree: Tree) =>
    `|${before ? ` ${tree.label === 'before' ? `before (${tree.ref})` : 'after'} |` : ''} ${n(r.subscribers)} | ${n(r.history)} | ${n(r.deliveries)} | ${ms(r.seededMs)} | ${ms(median(r.snapshotMs))} (${r.snapshotMs.map(ms).join(', ')}) | ${ms(median(r.wholeMs))} (${r.wholeMs.map(ms).join(', ')}) |`;
  const comparison = before
    ? `\n${comparisonTable(
        before,
        bySize.flatMap(([was, now]) => [
          { what: `report data at ${n(now!.subscribers)}`, before: median(was!.snapshotMs), after: median(now!.snapshotMs), unit: 'ms' },
          { what: `whole report at ${n(now!.subscribers)}`, before: median(was!.wholeMs), after: median(now!.wholeMs), unit: 'ms' },
        ]),
      )}\n`
    : '';
  const body = `PostgreSQL (a throwaway server per size${before ? ` and tree; each tree's own store, migrations, report code and recaps, imported from its folder, the rounds alternating between ${before.ref} and this tree` : ''}, default settings). Load average ${loadBefore} at the start and ${loadavg()[0]!.toFixed(2)} at the end. Data per size: the subscribers over 52 weeks, a fifth of them gone three weeks later, 10 recaps sent to up to 80,000 each, 2,000 webhook events, seeded with set-based statements.
${comparison}
|${before ? ' tree |' : ''} subscribers | state-history rows | ledger rows | seeded in | \`store.reportSnapshot(52)\`, median of ${ROUNDS} | whole report: gather + 4 Vega charts + HTML, median of ${ROUNDS} |
|---|${before ? '---|' : ''}---|---|---|---|---|
${bySize.flatMap((perTree) => perTree.map((r, t) => row(r, trees[t]!.tree))).join('\n')}

${goalLines(goals)}`;
  if (process.env.BENCH_REPORT_PRINT_ONLY) console.log(body);
  else await recordResults('Operator report at 100,000 and 1,000,000 subscribers', benchCommand('npm run bench -- report', before), body);
}

if (import.meta.url === `file://${process.argv[1]}`) await runReportBench();
