// The figures GET /metrics answers (server/metrics/), read in one call at scrape time over the SQL
// function of supabase/migrations/20261130005020_metrics_snapshot.sql.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

export interface MetricsSnapshot {
  /** Subscribers by state (pending, active, unsubscribed, bounced, complained); absent states are 0. */
  subscribers: Record<string, number>;
  /** Subscribers by the page they signed up on (or `import`) and their state now; the largest groups. */
  signups: { source: string; state: string; count: number }[];
  /** The latest sending run (scheduled or manual); null before the first. */
  run: {
    kind: string;
    week: string | null;
    startedAt: Date;
    finishedAt: Date | null;
    outcome: string | null;
    /** Messages in this run's batches by batch state (pending, sent, failed, unknown, skipped), as it goes. */
    messages: Record<string, number>;
  } | null;
  outbox: { queued: number; retrying: number; held: number };
  clicks: number;
}

export interface MetricsStore {
  metricsSnapshot(): Promise<MetricsSnapshot>;
}

const count = z.union([z.number(), z.string()]).transform(Number);
const counts = z.record(z.string(), count);
const instant = z.string().transform((value) => new Date(value));

const snapshotRow = z
  .object({
    subscribers: counts,
    signups: z.array(z.object({ source: z.string(), state: z.string(), n: count })),
    run: z
      .object({ kind: z.string(), week: z.string().nullable(), started_at: instant, finished_at: instant.nullable(), outcome: z.string().nullable(), messages: counts })
      .nullable(),
    outbox: z.object({ queued: count, retrying: count, held: count }),
    clicks: count,
  })
  .transform(
    (row): MetricsSnapshot => ({
      subscribers: row.subscribers,
      signups: row.signups.map((g) => ({ source: g.source, state: g.state, count: g.n })),
      run: row.run && {
        kind: row.run.kind,
        week: row.run.week,
        startedAt: row.run.started_at,
        finishedAt: row.run.finished_at,
        outcome: row.run.outcome,
        messages: row.run.messages,
      },
      outbox: row.outbox,
      clicks: row.clicks,
    }),
  );

export function metricsStore(call: CallFunction): MetricsStore {
  return {
    async metricsSnapshot() {
      const answer = await call('metrics_snapshot', {});
      return snapshotRow.parse(typeof answer === 'string' ? JSON.parse(answer) : answer);
    },
  };
}
