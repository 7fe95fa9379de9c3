// The operator's report on PostgreSQL at 100,000 and at 1,000,000 subscribers with a year of
// history, 10 recaps sent to ~80,000 each and 2,000 webhook events: the store's snapshot (one SQL
// function, the report's data) and the whole `gather + render` (what `npm run report` does).
// Goals (issue 41): report data ≤ 1 s at both sizes; the whole report page ≤ 3 s at 1,000,000.
//   npm run bench -- report
// Knobs: BENCH_REPORT_SIZES (default 100000,1000000), BENCH_ROUNDS (default 3; medians),
// BENCH_REPORT_PRINT_ONLY=1 (print instead of writing to bench/RESULTS.md).
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { recaps } from '../content/index.ts';
import { gatherReport } from '../jobs/report/gather.ts';
import { renderReportHtml } from '../jobs/report/render.tsx';
import { createPgClient, openPostgresStore } from '../server/store/postgres.ts';
import { startOwnPostgres } from '../tests/support/own-postgres.ts';
import { goalLines, type Goal } from './support/goals.ts';
import { recordResults } from './support/results.ts';

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

interface SizeResult {
  subscribers: number;
  seededMs: number;
  history: number;
  deliveries: number;
  snapshotMs: number[];
  wholeMs: number[];
  weeks: number;
}

async function measure(subscribers: number): Promise<SizeResult> {
  const postgres = await startOwnPostgres({ maxConnections: 50 });
  const store = await openPostgresStore(postgres.url);
  const sql = createPgClient(postgres.url, { max: 2 });
  try {
    const seededMs = await timed(() => seed(sql, subscribers));
    const counts = await sql.query<{ history: number; deliveries: number }>(
      'select (select count(*)::int from public.subscriber_state_history) as history, (select count(*)::int from public.digest_deliveries) as deliveries',
    );
    const snapshotMs: number[] = [];
    const wholeMs: number[] = [];
    let weeks = 0;
    for (let round = 0; round < ROUNDS; round++) {
      snapshotMs.push(await timed(async () => (weeks = (await store.reportSnapshot(52)).weeks.length)));
      wholeMs.push(
        await timed(async () => {
          const data = await gatherReport({ store, recaps, now: new Date(), siteUrl: 'https://launchedweekly.com', production: true, digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 } });
          await renderReportHtml(data);
        }),
      );
    }
    console.error(`${subscribers.toLocaleString('en-US')} subscribers: seeded in ${ms(seededMs)}, data ${snapshotMs.map(ms).join(', ')}, whole ${wholeMs.map(ms).join(', ')}`);
    return { subscribers, seededMs, ...counts.rows[0]!, snapshotMs, wholeMs, weeks };
  } finally {
    await sql.close();
    await store.close();
    await postgres.destroy();
  }
}

export async function runReportBench(): Promise<void> {
  const loadBefore = loadavg()[0]!.toFixed(2);
  const results: SizeResult[] = [];
  for (const size of SIZES) results.push(await measure(size));
  const n = (value: number) => value.toLocaleString('en-US');
  const goals: Goal[] = results.flatMap((r) => [
    { what: `report data at ${n(r.subscribers)}`, value: Math.round(median(r.snapshotMs)), is: '≤', target: 1000, unit: 'ms' } satisfies Goal,
    ...(r.subscribers >= 1_000_000 ? [{ what: `whole report page at ${n(r.subscribers)}`, value: Math.round(median(r.wholeMs)), is: '≤', target: 3000, unit: 'ms' } satisfies Goal] : []),
  ]);
  const body = `PostgreSQL (a throwaway server per size, default settings). Load average ${loadBefore} at the start and ${loadavg()[0]!.toFixed(2)} at the end. Data per size: the subscribers over 52 weeks, a fifth of them gone three weeks later, 10 recaps sent to up to 80,000 each, 2,000 webhook events, seeded with set-based statements.

| subscribers | state-history rows | ledger rows | seeded in | \`store.reportSnapshot(52)\`, median of ${ROUNDS} | whole report: gather + 4 Vega charts + HTML, median of ${ROUNDS} |
|---|---|---|---|---|---|
${results.map((r) => `| ${n(r.subscribers)} | ${n(r.history)} | ${n(r.deliveries)} | ${ms(r.seededMs)} | ${ms(median(r.snapshotMs))} (${r.snapshotMs.map(ms).join(', ')}) | ${ms(median(r.wholeMs))} (${r.wholeMs.map(ms).join(', ')}) |`).join('\n')}

${goalLines(goals)}`;
  if (process.env.BENCH_REPORT_PRINT_ONLY) console.log(body);
  else await recordResults('Operator report at 100,000 and 1,000,000 subscribers', 'npm run bench -- report', body);
}

if (import.meta.url === `file://${process.argv[1]}`) await runReportBench();
