// The operator's report at 100,000 subscribers on PostgreSQL, and what its state-history trigger
// costs a signup. Both compared within this run:
// - report: the store's snapshot (one SQL function) and the whole `gather + render`, on a list of
//   100,000 with a year of history, 10 recaps sent to ~80,000 each and 2,000 webhook events;
// - signups: 20,000 concurrent single-mode signups (store.signUp, the batched path the API uses) with the
//   statement-level trigger on, then off, alternating, as a ratio.
//   npm run bench -- report
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { recaps } from '../content/index.ts';
import { gatherReport } from '../jobs/report/gather.ts';
import { renderReportHtml } from '../jobs/report/render.tsx';
import { createPgClient, openPostgresStore } from '../server/store/postgres.ts';
import { startOwnPostgres } from '../tests/support/own-postgres.ts';
import { addSignup } from '../tests/support/store-ops.ts';
import { recordResults } from './support/results.ts';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 100_000);
const SIGNUPS = Number(process.env.BENCH_SIGNUPS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (n: number) => `${n.toFixed(0)} ms`;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

export async function runReportBench(): Promise<void> {
  const loadBefore = loadavg()[0]!.toFixed(2);
  const postgres = await startOwnPostgres({ maxConnections: 50 });
  const store = await openPostgresStore(postgres.url);
  const sql = createPgClient(postgres.url, { max: 2 });
  try {
    // A year of list: signups spread over 52 weeks, a fifth of them gone a few weeks later.
    const seeded = await timed(async () => {
      await sql.query(
        `insert into public.email_signups (email, source, created_at)
         select 'reader' || i || '@bench.test', (array['/', '/archive', '/about', '/weekly-recap-july-14'])[1 + i % 4],
                now() - (i % 52) * interval '1 week'
         from generate_series(1, $1::int) as i`,
        [SUBSCRIBERS],
      );
      await sql.query(`update public.email_signups set unsubscribed_at = created_at + interval '3 weeks', unsubscribe_reason = (array['unsubscribed','bounced','complained'])[1 + (length(email) % 3)]
                       where right(split_part(email, '@', 1), 1) in ('3', '7') and created_at < now() - interval '3 weeks'`);
      await sql.query(`update public.subscriber_state_history h set changed_at = case when h.state = 'active' then s.created_at else s.unsubscribed_at end
                       from public.email_signups s where s.id::text = h.subscriber_id`);
      for (let week = 0; week < 10; week++) {
        await sql.query(
          `insert into public.digest_deliveries (recap_date, subscriber_id, provider_message_id, sent_at)
           select date '2025-07-14' - $1::int * 7, id::text, 'msg-' || $1 || '-' || id, now() - $1::int * interval '1 week'
           from public.email_signups where created_at < now() - $1::int * interval '1 week' limit 80000`,
          [week],
        );
      }
      await sql.query(
        `insert into public.email_events (svix_id, event_type, provider_message_id, subscriber_id, occurred_at)
         select 'svix-' || n, case when n % 5 = 0 then 'email.complained' else 'email.bounced' end, provider_message_id, subscriber_id, now()
         from (select row_number() over () as n, provider_message_id, subscriber_id from public.digest_deliveries limit 2000) d`,
      );
      await sql.query('analyze');
    });
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

    // Signups with the trigger on and off, alternating, each on fresh addresses.
    const signupMs = { on: [] as number[], off: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['on', 'off'] as const) {
        await sql.query(`alter table public.email_signups ${mode === 'on' ? 'enable' : 'disable'} trigger email_signups_state_insert`);
        const prefix = `signup-${mode}-${round}-`;
        signupMs[mode].push(await timed(() => Promise.all(Array.from({ length: SIGNUPS }, (_, i) => addSignup(store, `${prefix}${i}@bench.test`, '/')))));
      }
    }
    await sql.query('alter table public.email_signups enable trigger email_signups_state_insert');

    const on = median(signupMs.on);
    const off = median(signupMs.off);
    await recordResults(
      'Operator report at 100,000 subscribers; cost of the state-history trigger on signups',
      'npm run bench -- report',
      `PostgreSQL (own throwaway server, default settings). Load average ${loadBefore} at the start and ${loadavg()[0]!.toFixed(2)} at the end; the trigger ratio compares runs made side by side.

Data: ${SUBSCRIBERS.toLocaleString('en-US')} subscribers over 52 weeks, ${counts.rows[0]!.history.toLocaleString('en-US')} state-history rows, ${counts.rows[0]!.deliveries.toLocaleString('en-US')} ledger rows (10 recaps), 2,000 webhook events; seeded in ${ms(seeded)}.

| what | median of ${ROUNDS} | runs |
|---|---|---|
| \`store.reportSnapshot(52)\` (${weeks} weekly points) | ${ms(median(snapshotMs))} | ${snapshotMs.map(ms).join(', ')} |
| whole report: gather + 4 Vega charts + HTML | ${ms(median(wholeMs))} | ${wholeMs.map(ms).join(', ')} |
| ${SIGNUPS.toLocaleString('en-US')} concurrent signups, trigger on | ${ms(on)} (${Math.round(SIGNUPS / (on / 1000)).toLocaleString('en-US')}/s) | ${signupMs.on.map(ms).join(', ')} |
| ${SIGNUPS.toLocaleString('en-US')} concurrent signups, trigger off | ${ms(off)} (${Math.round(SIGNUPS / (off / 1000)).toLocaleString('en-US')}/s) | ${signupMs.off.map(ms).join(', ')} |

Signup time with the trigger / without: **${(on / off).toFixed(2)}×**.`,
    );
  } finally {
    await sql.close();
    await store.close();
    await postgres.destroy();
  }
}
