// The report's two outputs from one set of figures: the HTML page and the terminal's headlines.
import { senderHoldWords } from '../../server/mail/sender-refusal.ts';
import { renderToStaticMarkup } from 'react-dom/server';
import { unknownPart } from '../../server/mail/digest/run-report.ts';
import { renderCharts } from './charts.ts';
import { RATE_LINE, STATES, type ReportData } from './gather.ts';
import { percent } from './page-kit.tsx';
import { ReportPage } from './ReportPage.tsx';

export async function renderReportHtml(data: ReportData): Promise<string> {
  const charts = await renderCharts(data);
  return `<!doctype html>\n${renderToStaticMarkup(<ReportPage data={data} charts={charts} />)}\n`;
}

export function headlineFigures(data: ReportData): string[] {
  const { totals, snapshot, sends, nextRun } = data;
  const lines = [`Subscribers: ${STATES.map((state) => `${totals[state].toLocaleString('en-US')} ${state}`).join(' · ')}`];
  const thisWeek = snapshot.weeks.at(-1)?.signups ?? 0;
  const fourWeeks = snapshot.weeks.slice(-4).reduce((sum, week) => sum + week.signups, 0);
  const top = snapshot.sources[0];
  lines.push(`Signups: ${thisWeek} this week · ${fourWeeks} in the last 4 weeks${top ? ` · top source ${top.source} (${top.signups})` : ''}`);
  const last = sends[0];
  if (last) {
    const flag = (r: number) => (r > RATE_LINE ? ' ABOVE 0.3 %' : '');
    lines.push(
      `Last send: ${last.label} · ${last.sent} sent · ${last.failed} failed · ${last.unknown} unknown · ${last.skipped} skipped · bounces ${last.bounced} (${percent(last.bounceRate)}${flag(last.bounceRate)}) · complaints ${last.complained} (${percent(last.complaintRate)}${flag(last.complaintRate)})`,
    );
  } else {
    lines.push('Last send: none yet');
  }
  lines.push(...clickFigures(data));
  const over = sends.filter((send) => send.bounceRate > RATE_LINE || send.complaintRate > RATE_LINE);
  if (over.length > 0) lines.push(`Above the 0.3 % line: ${over.map((send) => send.recapDate).join(', ')} (see the report for what to do)`);
  const { outbox } = data;
  lines.push(`Mail outbox, last ${outbox.days} days: ${outbox.queued} queued · ${outbox.retrying} retrying · ${outbox.failed} failed · ${outbox.sent} sent${unknownPart(outbox.unknown)}`);
  if (outbox.hold) lines.push(`Mail held since ${outbox.hold.since.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${senderHoldWords(outbox.hold.cause).cause} (${outbox.hold.reason})`);
  if (nextRun.kind === 'off') {
    lines.push(`Next run: none (${nextRun.reason})`);
  } else {
    const what = nextRun.recap && !nextRun.reason ? `${nextRun.recap.label} to ${Math.max(0, nextRun.activeSubscribers - nextRun.alreadyHaveIt)} subscribers` : `nothing: ${nextRun.reason}`;
    const counts = (status: string) => nextRun.checks.filter((check) => check.status === status).length;
    const checks = nextRun.checks.length > 0 ? ` · pre-send checks: ${counts('pass')} passed, ${counts('warn')} warnings, ${counts('fail')} failed` : '';
    lines.push(`Next run: ${nextRun.at.toISOString().replace('T', ' ').slice(0, 16)} UTC (${nextRun.cron}, ${nextRun.timezone}) · ${what}${checks}`);
  }
  const failing = data.setupChecks.filter((check) => check.status !== 'pass');
  lines.push(failing.length === 0 ? `Set-up checks: ${data.setupChecks.length} passed` : `Set-up checks: ${failing.map((check) => `${check.title} ${check.status}ed`).join(', ')}`);
  for (const check of failing) lines.push(`  ${check.title}: ${check.detail} Fix: ${check.fix ?? ''}`);
  if (data.coming.length === 0) lines.push('Coming weeks: none (every week in content/recaps is public)');
  for (const week of data.coming) {
    lines.push(`Coming: ${week.label} · ${week.line}`);
    if (week.warning) lines.push(`  warning: ${week.warning}`);
  }
  return lines;
}

/** The last send's reach and clicks, and the most clicked launch across the weeks shown. */
function clickFigures({ engagement }: ReportData): string[] {
  const last = engagement.weeks[0];
  if (!last) return [];
  const topOfWeek = last.entries[0]?.clicks ? ` · most clicked ${last.entries[0].name} (${last.entries[0].clicks})` : '';
  const lines = [
    `Reach of the last send: ${last.sent} sent · ${last.delivered} delivered · ${last.opened} opened (approximate) · ${last.clicks} clicks (${percent(last.clickRate)} click rate)${topOfWeek}`,
  ];
  const top = engagement.topLaunches[0];
  if (top) lines.push(`Most clicked launch of the weeks shown: ${top.name} (${top.label}, ${top.clicks} clicks)`);
  return lines;
}
