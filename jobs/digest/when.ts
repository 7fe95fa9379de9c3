// "Say when": for a week, when its page becomes public (content/publication.ts) and when the
// schedule (DIGEST_CRON in DIGEST_TZ) sends its e-mail: the first run from that moment on, while
// the week is fresh (DIGEST_FRESHNESS_DAYS). A run on the week's own date before the page is public
// is the operator's mistake worth a warning: it finds the week hidden and sends nothing new.
// new-recap, validate-content, the preview command and the operator's report all print this.
import cron from 'node-cron';
import { byDateOldestFirst, daysBetween } from '../../content/dates.ts';
import { formatInstant, isPublic, publicationInstant, wallClockInstant } from '../../content/publication.ts';
import type { Recap } from '../../content/schema.ts';
import { isoDateIn } from '../../server/mail/digest/recap.ts';

export interface Schedule {
  /** DIGEST_CRON, or 'off' when this process does not schedule the digest. */
  cron: string;
  timezone: string;
  freshnessDays: number;
}

export interface WeekWhen {
  date: string;
  publicAt: Date;
  /** The scheduled run that sends it; null when none will. */
  emailAt: Date | null;
  /** `public Mon 30 Nov 09:00 UTC, e-mail 09:00 UTC` */
  line: string;
  /** Set when the schedule would run on the week's date before its page is public. */
  warning: string | null;
}

const MINUTE_MS = 60_000;

/** The runs of a cron expression in [from, until), in order (minute by minute: a week is 10,080 checks). */
function* runsBetween(expression: string, timeZone: string, from: Date, until: Date): Generator<Date> {
  const task = cron.createTask(expression, () => {}, { timezone: timeZone });
  const seconds = cron.parse(expression).second;
  try {
    for (let minute = Math.floor(from.getTime() / MINUTE_MS) * MINUTE_MS; minute < until.getTime(); minute += MINUTE_MS) {
      for (const second of seconds) {
        const at = new Date(minute + second * 1000);
        if (at >= from && at < until && task.match(at)) yield at;
      }
    }
  } finally {
    void task.destroy();
  }
}

/** `year`: name the year in every date of the line and warning (new-recap's output, read months later). */
export function whenOf(recap: Pick<Recap, 'date' | 'publishAt'>, schedule: Schedule, { year = false }: { year?: boolean } = {}): WeekWhen {
  const { timezone: timeZone } = schedule;
  const publicAt = publicationInstant(recap, timeZone);
  const publicText = formatInstant(publicAt, timeZone, { year });
  if (schedule.cron === 'off') {
    return { date: recap.date, publicAt, emailAt: null, line: `public ${publicText}, e-mail not scheduled here (DIGEST_CRON=off)`, warning: null };
  }
  const dayStart = wallClockInstant(recap.date, 0, timeZone);
  // Fresh until the calendar day that is freshnessDays after its date, in DIGEST_TZ.
  const freshUntil = new Date(dayStart.getTime() + (schedule.freshnessDays + 1) * 86_400_000);
  const from = publicAt < dayStart ? publicAt : dayStart;
  let early: Date | null = null;
  let emailAt: Date | null = null;
  for (const run of runsBetween(schedule.cron, timeZone, from, freshUntil)) {
    if (daysBetween(recap.date, isoDateIn(run, timeZone)) >= schedule.freshnessDays) break;
    if (run < publicAt) {
      early ??= run >= dayStart ? run : null;
      continue;
    }
    emailAt = run;
    break;
  }
  const sameDay = emailAt !== null && isoDateIn(emailAt, timeZone) === isoDateIn(publicAt, timeZone);
  const emailText = emailAt
    ? `e-mail ${formatInstant(emailAt, timeZone, { year, day: !sameDay })}`
    : `no scheduled e-mail (no run of DIGEST_CRON "${schedule.cron}" within the ${schedule.freshnessDays} days from its date; send it with npm run digest -- --recap ${recap.date})`;
  const warning = early
    ? `the e-mail would go out before the page is public: DIGEST_CRON "${schedule.cron}" runs at ${formatInstant(early, timeZone, { year })}, before the page is public at ${formatInstant(publicAt, timeZone, { year, day: false })}, so that run finds this week hidden and sends nothing new${emailAt ? `; its e-mail waits until ${formatInstant(emailAt, timeZone, { year })}` : ''}. Set publishAt: '${early.toISOString()}' (or earlier) in content/recaps/${recap.date}.ts, or move DIGEST_CRON after ${formatInstant(publicAt, timeZone, { year, day: false })}.`
    : null;
  return { date: recap.date, publicAt, emailAt, line: `public ${publicText}, ${emailText}`, warning };
}

/** The weeks not public at `now`, oldest first, each with when it will be. */
export function comingWeeks(recaps: readonly Recap[], now: Date, schedule: Schedule): WeekWhen[] {
  return recaps
    .filter((recap) => !isPublic(recap, { now, timeZone: schedule.timezone }))
    .sort(byDateOldestFirst)
    .map((recap) => whenOf(recap, schedule));
}

/** One line per coming week (and one per warning), naming its file: what validate-content prints. */
export function comingWeekLines(weeks: readonly WeekWhen[]): { info: string[]; warnings: string[] } {
  if (weeks.length === 0) return { info: ['Every week is public; none is coming.'], warnings: [] };
  return {
    info: weeks.map((week) => `content/recaps/${week.date}.ts: coming: ${week.line}`),
    warnings: weeks.flatMap((week) => (week.warning ? [`content/recaps/${week.date}.ts: warning: ${week.warning}`] : [])),
  };
}
