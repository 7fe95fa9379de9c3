// The figures of the operator's report, gathered once: the store's snapshot (weekly states,
// signups, sources, sends), each send's rates against the 0.3 % line, and what the next scheduled
// run would do, with the pre-send checks on the recap it would send.
import type { OutboxSummary } from '../../server/store/mail-outbox.ts';
import { createTask } from 'node-cron';
import type { Recap } from '../../content/schema.ts';
import { plural, weekLabel } from '../../content/text.ts';
import type { ReportSnapshot } from '../../server/store/report-types.ts';
import type { ReportReadStore } from '../../server/store/types.ts';
import { checkRecap } from '../../server/mail/digest/presend.ts';
import type { CheckResult } from '../../server/mail/digest/presend-checks.ts';
import { chooseRecap, findRecapIn, isoDateIn } from '../../server/mail/digest/recap.ts';
import { comingWeeks, type WeekWhen } from '../digest/when.ts';
import { engagementOf, type Engagement } from './engagement.ts';
import { setupChecks, type SetupCheck } from './setup-checks.ts';
import type { GrowthReport } from '../../server/store/referrals.ts';
import { maskEmail } from '../../server/subscribers/link-tokens.ts';

/** Gmail's and Yahoo's bulk-sender limit for spam complaints, also used as the bounce warning line. */
export const RATE_LINE = 0.003;
export const REPORT_WEEKS = 52;

export const STATES = ['active', 'pending', 'unsubscribed', 'bounced', 'complained'] as const;
export type State = (typeof STATES)[number];

export interface SendRow {
  recapDate: string;
  label: string;
  headline: string | null;
  sent: number;
  failed: number;
  unknown: number;
  skipped: number;
  firstSentAt: Date | null;
  lastSentAt: Date | null;
  bounced: number;
  complained: number;
  bounceRate: number;
  complaintRate: number;
}

export type NextRun =
  | { kind: 'off'; reason: string }
  | {
      kind: 'scheduled';
      at: Date;
      cron: string;
      timezone: string;
      /** The recap the run would send, or null with `reason` saying why it would send nothing. */
      recap: { date: string; label: string; headline: string; path: string } | null;
      reason: string | null;
      activeSubscribers: number;
      alreadyHaveIt: number;
      checks: CheckResult[];
    };

export interface ReportData {
  generatedAt: Date;
  siteUrl: string;
  snapshot: ReportSnapshot;
  totals: Record<State, number>;
  sends: SendRow[];
  nextRun: NextRun;
  /** The mail outbox (confirmations, welcomes, notices) of the last OUTBOX_DAYS days. */
  outbox: OutboxSummary;
  /** The weeks not public yet, oldest first: when each will be public and e-mailed. */
  coming: (WeekWhen & { label: string })[];
  /** How the servers are set up, from what they recorded while serving (TRUST_PROXY). */
  setupChecks: SetupCheck[];
  /** Each sent week's reach and its launches' clicks (jobs/report/engagement.ts). */
  engagement: Engagement;
  /** Where the new readers of the last GROWTH_WEEKS weeks came from (jobs/report/GrowthSection.tsx). */
  growth: Growth;
}

/** The report's growth figures, the top referrers' addresses masked (r•••@example.org). */
export interface Growth extends Omit<GrowthReport, 'topReferrers'> {
  topReferrers: { masked: string; referrals: number }[];
  weeksCovered: number;
}

/** The growth section covers the last quarter year, week by week. */
export const GROWTH_WEEKS = 12;

/** The report shows the mail outbox of the last week. */
export const OUTBOX_DAYS = 7;

export interface GatherOptions {
  store: ReportReadStore;
  recaps: readonly Recap[];
  now: Date;
  siteUrl: string;
  production: boolean;
  digest: { cron: string; timezone: string; freshnessDays: number };
}

export const rate = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

export function nextRunAt(cron: string, timezone: string): Date | null {
  const task = createTask(cron, () => {}, { timezone });
  try {
    return task.getNextRuns(1)[0] ?? null;
  } finally {
    void task.destroy();
  }
}

/**
 * The recap a scheduled run at `at` picks: the digest's own choice (chooseRecap, in 'scheduled'
 * mode), worded for the report. A stale recap is still named, so its pre-send checks show.
 */
export function recapForRun(recaps: readonly Recap[], at: Date, timezone: string, freshnessDays: number): { recap: Recap | null; reason: string | null } {
  const chosen = chooseRecap({ recaps, publication: { now: at, timeZone: timezone }, scheduled: true, preview: false, freshnessDays });
  if (!('refused' in chosen)) return { recap: chosen.recap, reason: null };
  const recap = chosen.ref ? findRecapIn(recaps, chosen.ref.date) : undefined;
  if (chosen.refused === 'stale' && chosen.ref && recap) {
    return {
      recap,
      reason: `the newest recap, ${weekLabel(recap.date)}, will be ${plural(chosen.ref.ageDays, 'day')} old and the schedule sends a recap only during the ${plural(freshnessDays, 'day')} from its date (DIGEST_FRESHNESS_DAYS); add that week's recap to content/recaps`,
    };
  }
  return { recap: null, reason: `no recap is public by ${isoDateIn(at, timezone)}` };
}

async function planNextRun(options: GatherOptions, active: number): Promise<NextRun> {
  const { cron, timezone, freshnessDays } = options.digest;
  if (cron === 'off') return { kind: 'off', reason: 'DIGEST_CRON=off: this process does not schedule the digest (another replica or a cron job may).' };
  const at = nextRunAt(cron, timezone);
  if (!at) return { kind: 'off', reason: `DIGEST_CRON "${cron}" has no next run.` };
  const { recap, reason } = recapForRun(options.recaps, at, timezone, freshnessDays);
  const checks = recap ? await checkRecap(recap, options.siteUrl, options.production) : [];
  const alreadyHaveIt = recap && !reason ? await options.store.countDeliveries(recap.date) : 0;
  return {
    kind: 'scheduled',
    at,
    cron,
    timezone,
    recap: recap ? { date: recap.date, label: weekLabel(recap.date), headline: recap.headline, path: recap.path } : null,
    reason,
    activeSubscribers: active,
    alreadyHaveIt,
    checks,
  };
}

export async function gatherReport(options: GatherOptions): Promise<ReportData> {
  const snapshot = await options.store.reportSnapshot(REPORT_WEEKS);
  const totals = Object.fromEntries(STATES.map((state) => [state, snapshot.totals[state] ?? 0])) as Record<State, number>;
  const headlines = new Map(options.recaps.map((recap) => [recap.date, recap.headline]));
  const sends = snapshot.sends.map((send) => ({
    ...send,
    label: weekLabel(send.recapDate),
    headline: headlines.get(send.recapDate) ?? null,
    bounceRate: rate(send.bounced, send.sent),
    complaintRate: rate(send.complained, send.sent),
  }));
  const coming = comingWeeks(options.recaps, options.now, options.digest).map((week) => ({ ...week, label: weekLabel(week.date) }));
  const outbox = await options.store.outboxSummary(OUTBOX_DAYS);
  const setup = setupChecks(await options.store.serverNotices());
  const engagement = engagementOf(sends, await options.store.engagementCounts(), options.recaps, options.siteUrl);
  const growthReport = await options.store.growthReport(GROWTH_WEEKS);
  const growth = { ...growthReport, topReferrers: growthReport.topReferrers.map((r) => ({ masked: maskEmail(r.email), referrals: r.referrals })), weeksCovered: GROWTH_WEEKS };
  return { generatedAt: options.now, siteUrl: options.siteUrl, snapshot, totals, sends, nextRun: await planNextRun(options, totals.active), coming, outbox, setupChecks: setup, engagement, growth };
}
