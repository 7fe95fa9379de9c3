// Scenarios written by hand, each the shortest order of events that breaks one promise on the code
// as it was when the simulation was written: a regression test for each, and a plan the random
// scenarios reach only rarely. Each keeps every other fault out, so its failure names one hole.
import type { Plan, WeekPlan } from './plan.ts';

const QUIET_WEEK: WeekPlan = { deploy: null, outage: null, joins: 0, doubleJoins: 0, leaves: 0, bounces: 0, suppressedRejoin: false, faultPercent: 0, refusal: null, restore: null };

const quietPlan = (weeks: Partial<WeekPlan>[], extra: Partial<Plan> = {}): Plan => ({
  seed: 7,
  replicas: 1,
  start: '2027-03-06',
  cron: '0 9 * * 1',
  timezone: 'UTC',
  initialReaders: 4,
  killPercent: 0,
  weeks: weeks.map((week) => ({ ...QUIET_WEEK, ...week })),
  ...extra,
});

export const KNOWN_HOLES: { name: string; plan: Plan }[] = [
  {
    // Down over Monday 09:00, back at 10:00: the catch-up claims the tick, and the process dies on
    // the first prune, before any run row; the next start finds the tick "claimed elsewhere".
    name: 'a process killed between the tick claim and its run row: the week still goes out, marked late, told once',
    plan: quietPlan([{ outage: { beforeTickMinutes: 60, minutes: 120, killed: false } }, {}], { kills: [{ life: 'r0.2', atCall: 4, when: 'after', restartAfterMinutes: 5 }] }),
  },
  {
    // Killed in the middle of Monday's run and down for a week: the start 7 h after the next tick
    // says that tick was missed, then the start-up resume sends its week anyway.
    name: 'the start-up resume keeps DIGEST_CATCHUP_HOURS: a week told missed is not sent',
    plan: quietPlan([{}, {}], { kills: [{ life: 'r0.1', atCall: 19, when: 'after', restartAfterMinutes: 7 * 24 * 60 + 7 * 60 }] }),
  },
  {
    // The sender refused for 30 hours from Monday 11:00; a confirmation promised at 11:10.
    name: 'mail held while the provider refuses the sender for 30 hours is sent after, not failed',
    plan: quietPlan([{ refusal: { afterTickHours: 2, kind: 'day', hours: 30 } }, {}]),
  },
  {
    // A backup on Wednesday, three confirmations, the backup restored, three more signups.
    name: 'confirmations after a restored backup reach the provider as new messages',
    plan: quietPlan([{ restore: { afterTickHours: 50, minutesLater: 60 } }, {}]),
  },
  {
    // Tuesday's tick missed past DIGEST_CATCHUP_HOURS and told; then DIGEST_CRON moves to Monday
    // evening: the new schedule's last tick (a Monday evening with servers up) has no record, and
    // the start-up told the same week missed again, as if no server had run.
    name: 'a DIGEST_CRON moved earlier in the week does not tell a settled week missed again',
    plan: quietPlan([{ outage: { beforeTickMinutes: 10, minutes: 8 * 60, killed: false } }, { deploy: { cron: '0 18 * * 1', timezone: 'UTC' } }, {}], { cron: '0 9 * * 2' }),
  },
  {
    // Down from Tuesday 08:00 for five days, over the Tuesday tick, while a deploy moves DIGEST_CRON
    // to Monday 00:00: the new schedule's last tick (the Monday before) was never its own, and the
    // old Tuesday tick, the week's, was missed without a word.
    name: 'a DIGEST_CRON moved earlier in the week while no server ran: the old schedule\'s missed tick is told',
    plan: quietPlan([{ outage: { beforeTickMinutes: 60, minutes: 5 * 24 * 60, killed: false } }, { deploy: { cron: '0 0 * * 1', timezone: 'UTC' } }, {}], { cron: '0 9 * * 2' }),
  },
  {
    // Two servers; the one running Monday's tick dies right after writing its batch, the other is
    // killed a minute later (an outage starting a minute after the tick) and everything stays down
    // for 26 hours: the batch, never tried, is older than the provider's key window when the run is
    // taken over, and was once left unknown, its readers losing the week though nothing went out.
    name: 'a batch written by a run killed before trying it, found a day later, goes to its readers under a new key',
    plan: quietPlan([{ outage: { beforeTickMinutes: -1, minutes: 26 * 60, killed: true } }, {}], {
      replicas: 2,
      kills: [{ life: 'r0.1', atCall: 26, when: 'after', restartAfterMinutes: 27 * 60 }],
    }),
  },
  {
    // Monday's batch answered 500 (it may or may not have gone out), and so did the resume a minute
    // later; a reader in it complains two minutes after the tick. The next resume repeated the
    // batch exactly under its key, and so mailed the reader who had complained.
    name: 'a pending batch repeated after a reader in it complained leaves that reader out',
    plan: quietPlan([{}, {}], { digestFaults: ['server-error', 'server-error'], departures: [{ week: 0, afterTickMinutes: 2, reason: 'complained' }] }),
  },
];
