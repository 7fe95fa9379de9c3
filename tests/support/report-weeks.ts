// The report's weekly figures as the report tests compare them, and the SQL that moves a row's
// time back into an earlier week of that report.
import type { ReportSnapshot } from '../../server/store/report-types.ts';
import type { Store } from '../../server/store/types.ts';

/** SQL for the Tuesday of the week `weeksAgo` weeks before this one: a time safely inside that report week. */
export const weekStartSql = (weeksAgo: number) => `date_trunc('week', now()) - interval '${weeksAgo} weeks' + interval '1 day'`;

/** Each week of the year's report with only its state counts and signups, the figures a delete or a move in time changes. */
export async function reportWeekStates(store: Pick<Store, 'reportSnapshot'>): Promise<Pick<ReportSnapshot['weeks'][number], 'states' | 'signups'>[]> {
  return (await store.reportSnapshot(52)).weeks.map((w) => ({ states: w.states, signups: w.signups }));
}
