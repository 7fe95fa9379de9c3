// What must hold after a stretch of simulated Mondays. The expectations come from the scenario's
// model (who was on the list when, which servers ran when, what the provider refused); what
// happened comes from the provider's record, the log's notices and, for the state of each batch
// and message, the store.
import type { SimDatabase } from './database.ts';
import type { AcceptedMessage } from './provider.ts';
import { SIM_SETTINGS, stateAt, type Interval, type ScenarioRun, type WeekModel } from './scenario.ts';

const HOUR_MS = 3_600_000;

export interface Violation {
  invariant: string;
  detail: string;
}

const utc = (at: number) => `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

// A life that ends at the tick itself (killed in the tick's own run) was running at it; one that
// starts at the tick's very instant was not (its scheduler waits for ticks after its start, and its
// catch-up takes that one up as missed, as a server started a moment later would).
const upAt = (uptime: readonly Interval[], at: number) => uptime.some((life) => life.from < at && at <= life.to);
// Up before the tick and still up after it. A life killed at the tick's instant may have died
// before it claimed the tick (the next start then rightly runs it late) or after (it is resumed).
const upAcross = (uptime: readonly Interval[], at: number) => uptime.some((life) => life.from < at && at < life.to);

/** A server ran (or started) within [tick, tick + DIGEST_CATCHUP_HOURS]. */
const serverWithinDeadline = (uptime: readonly Interval[], week: WeekModel) =>
  uptime.some((life) => life.from <= week.tick + SIM_SETTINGS.catchUpHours * HOUR_MS && life.to > week.tick);

/**
 * After the tick, some server ran two quiet hours (no refusal of the sender) before the week went
 * stale: time enough for the resume's tries to finish what kills and faults left.
 */
function quietStretch(run: ScenarioRun, week: WeekModel): boolean {
  // A tick no server was up for runs late, and a late run is tried only until DIGEST_CATCHUP_HOURS after its tick.
  // A life killed at the tick's instant may have died before it claimed the tick: only the shorter
  // deadline is sure.
  const deadline = upAcross(run.model.uptime, week.tick) ? week.freshEnd : Math.min(week.freshEnd, week.tick + SIM_SETTINGS.catchUpHours * HOUR_MS);
  const blocked = run.model.refusals.filter((r) => r.from < deadline && r.to > week.tick);
  if (blocked.some((r) => r.forever)) return false;
  const clearFrom = Math.max(week.tick, ...blocked.map((r) => r.to));
  return run.model.uptime.some((life) => Math.min(life.to, deadline) - Math.max(life.from, clearFrom) >= 2 * HOUR_MS);
}

/** Each subscriber row's address by its id. */
type EmailsById = ReadonlyMap<string, string>;

/** A week whose ledger a restore may have rolled back (a batch of it accepted between backup and restore). */
function restoredOver(run: ScenarioRun, recap: string): boolean {
  return run.provider.accepted.some((m) => m.recap === recap && run.model.restores.some((r) => m.at.getTime() >= r.from && m.at.getTime() <= r.to));
}

/**
 * Readers (`address week`) of a batch left unknown for good reason: a try under its key had an
 * answer that may mean it went out (a server error, a request in progress, or a replica that
 * recorded the attempt and died before the request could leave), and the provider then
 * refused the sender until its key's day was over. Each week at most once wins over each week to
 * everyone then, and the operator is told, so the check is that they were.
 */
async function unknownForGoodReason(db: SimDatabase, run: ScenarioRun, emails: EmailsById, notices: readonly OperatorNotice[], violations: Violation[]): Promise<Set<string>> {
  const batches = await db.sql.query<{ id: string; key: string; ids: string[]; recap: string }>(
    `select id::text as id, idempotency_key as key, subscriber_ids as ids, recap_date::text as recap from public.digest_batches where state = 'unknown'`,
  );
  const excused = new Set<string>();
  for (const batch of batches.rows) {
    const uncertain = run.provider.events.some((e) => e.key === batch.key && (e.answer === '500' || e.answer === '409 concurrent')) || run.model.attemptsCutShort.has(batch.id);
    if (!uncertain || run.provider.acceptedUnder(batch.key).length > 0) continue;
    if (!notices.some((n) => n.subject.includes(batch.recap) && n.subject.includes('unknown'))) {
      violations.push({ invariant: 'every week reached every reader', detail: `batch ${batch.key} of the week of ${batch.recap} is unknown and no notice told the operator so` });
    }
    for (const id of batch.ids) excused.add(`${emails.get(id) ?? `#${id}`} ${batch.recap}`);
  }
  return excused;
}

/**
 * A tick no server was up for is run late only until DIGEST_CATCHUP_HOURS after it: past that, its
 * week goes to nobody (the operator is told it was missed), however its late run was held up. Up to
 * the next week's tick, when that week's own run takes over.
 */
function lateWeeksWithinDeadline(run: ScenarioRun, digests: readonly AcceptedMessage[], violations: Violation[]): void {
  for (const [index, week] of run.model.weeks.entries()) {
    if (upAt(run.model.uptime, week.tick)) continue;
    const deadline = week.tick + SIM_SETTINGS.catchUpHours * HOUR_MS;
    const nextTick = run.model.weeks[index + 1]?.tick ?? run.model.end;
    const late = digests.find((m) => m.recap === week.recap && m.at.getTime() > deadline && m.at.getTime() < nextTick);
    if (late) violations.push({ invariant: 'a late week goes out only within DIGEST_CATCHUP_HOURS', detail: `the ${utc(week.tick)} tick fell while no server ran; its week went to ${late.to} at ${utc(late.at.getTime())}` });
  }
}

function digestChecks(run: ScenarioRun, excused: ReadonlySet<string>, violations: Violation[]): void {
  const digests = run.provider.accepted.filter((m) => m.recap !== null);
  const byReaderWeek = new Map<string, number>();
  for (const m of digests) byReaderWeek.set(`${m.to} ${m.recap}`, (byReaderWeek.get(`${m.to} ${m.recap}`) ?? 0) + 1);
  for (const [key, count] of byReaderWeek) {
    if (count > 1 && !restoredOver(run, key.split(' ')[1]!)) violations.push({ invariant: 'each week at most once', detail: `${key.replace(' ', ' got the week of ')} ${count} times` });
  }
  lateWeeksWithinDeadline(run, digests, violations);
  for (const week of run.model.weeks) {
    if (!serverWithinDeadline(run.model.uptime, week) || !quietStretch(run, week)) continue;
    for (const reader of run.model.readers.values()) {
      const activeAtTick = stateAt(reader, week.tick) === 'active';
      const stayed = reader.states.every((change) => change.at <= week.tick || change.state === 'active');
      if (!activeAtTick || !stayed) continue;
      if (!digests.some((m) => m.to === reader.email && m.recap === week.recap) && !excused.has(`${reader.email} ${week.recap}`)) {
        violations.push({ invariant: 'every week reached every reader', detail: `${reader.email} (active at the ${utc(week.tick)} tick) never got the week of ${week.recap}` });
      }
    }
  }
  for (const reader of run.model.readers.values()) {
    const suppressed = reader.states.find((change) => change.state === 'bounced' || change.state === 'complained');
    if (!suppressed) continue;
    const after = digests.filter((m) => m.to === reader.email && m.at.getTime() > suppressed.at);
    if (after.length > 0) violations.push({ invariant: 'no suppressed mailbox mailed', detail: `${reader.email} (${suppressed.state} at ${utc(suppressed.at)}) got the week of ${after[0]!.recap} at ${utc(after[0]!.at.getTime())}` });
  }
}

async function ledgerChecks(db: SimDatabase, run: ScenarioRun, emails: EmailsById, violations: Violation[]): Promise<void> {
  // A sent batch's recipients the ledger says got the week; the batch itself keeps as its record
  // those who left before it was repeated, and they got nothing.
  const batches = await db.sql.query<{ id: string; key: string; ids: string[] }>(
    `select b.id::text as id, b.idempotency_key as key, array(select d.subscriber_id from public.digest_deliveries d where d.recap_date = b.recap_date and d.subscriber_id = any (b.subscriber_ids)) as ids
     from public.digest_batches b where b.state = 'sent'`,
  );
  for (const batch of batches.rows) {
    const accepted = new Set(run.provider.acceptedUnder(batch.key).map((m) => m.to));
    const missing = batch.ids.filter((id) => !accepted.has(emails.get(id) ?? `#${id}`));
    if (missing.length > 0) violations.push({ invariant: 'no row sent that the provider did not accept', detail: `digest batch ${batch.id} is sent; the provider never accepted ${missing.length} of its messages` });
  }
  const mail = await db.sql.query<{ id: string; kind: string; state: string; subscriber: string | null; payload: { to?: string; subject?: string }; error: string | null; keyId: string; generations: number }>(
    `select id::text as id, kind, state, subscriber_id as subscriber, payload, last_error as error, key_id::text as "keyId", key_generation as generations from public.mail_outbox`,
  );
  for (const row of mail.rows) {
    const to = row.kind === 'operator' ? row.payload.to : (emails.get(row.subscriber ?? '') ?? `subscriber ${row.subscriber} (no longer on the list)`);
    const subject = row.kind === 'operator' ? row.payload.subject : `${row.kind} for subscriber ${row.subscriber}`;
    // Each key generation is a key of its own: the row is sent when the provider accepted it under any.
    const keys = Array.from({ length: row.generations }, (_, index) => `outbox/${row.keyId}/${index + 1}`);
    // A row whose subscriber was pruned since names no address or subject any more: its keys alone say what went out.
    const matches = (m: { to: string; subject: string }) => row.subscriber === null && row.kind !== 'operator' ? true : m.to === to && m.subject === subject;
    if (row.state === 'sent' && !keys.some((key) => run.provider.acceptedUnder(key).some(matches))) {
      violations.push({ invariant: 'no row sent that the provider did not accept', detail: `outbox #${row.id} (${row.kind} to ${to}) is sent; the provider accepted no such message under outbox/${row.keyId}/1..${row.generations}` });
    }
    // A row whose subscriber was deleted since (an unconfirmed signup pruned) names nobody to reach;
    // one left unknown (a try whose answer was lost) reached its reader when the provider took it.
    const delivered = row.state === 'unknown' && keys.some((key) => run.provider.acceptedUnder(key).some(matches));
    if ((row.state === 'failed' || row.state === 'unknown') && !delivered && (row.kind === 'operator' || row.subscriber !== null)) {
      violations.push({ invariant: 'promised mail is never lost', detail: `outbox #${row.id} (${row.kind} to ${to}) is ${row.state}: ${row.error}` });
    }
  }
}

interface OperatorNotice {
  at: Date;
  subject: string;
  text: string;
}

/**
 * The notices the operator got: every one the log carried, and those only queued as e-mail (a
 * server that recorded a missed tick with its notice and died before its log line).
 */
async function operatorNotices(db: SimDatabase, run: ScenarioRun): Promise<OperatorNotice[]> {
  // The database's timestamps are aged with the simulation (database.ts): a row's age on its own
  // clock is its age in simulated time, counted back from the stretch's end, where the check runs.
  const queued = await db.sql.query<{ subject: string; text: string; ageMs: number }>(
    `select payload ->> 'subject' as subject, payload ->> 'text' as text, (extract(epoch from now() - created_at) * 1000)::float8 as "ageMs" from public.mail_outbox where kind = 'operator'`,
  );
  const logged = new Set(run.trace.notices.map((n) => n.subject));
  return [...run.trace.notices, ...queued.rows.filter((row) => !logged.has(row.subject)).map((row) => ({ subject: row.subject, text: row.text, at: new Date(run.model.end - Number(row.ageMs)) }))];
}

/** Restores of a backup taken before one of these instants and put back after it: each forgot what was recorded then. */
const restoresForgetting = (run: ScenarioRun, instants: readonly number[]) => run.model.restores.filter((r) => instants.some((at) => at >= r.from && at <= r.to)).length;

function noticeChecks(run: ScenarioRun, notices: readonly OperatorNotice[], violations: Violation[]): void {
  const missedNotices = notices.filter((n) => /Missed: |\(late\)|Late: /.test(`${n.subject}\n${n.text}`));
  const told = new Set<string>();
  for (const week of run.model.weeks) {
    if (upAt(run.model.uptime, week.tick) || !run.model.starts.some((s) => s > week.tick)) continue;
    const mark = utc(week.tick);
    told.add(mark);
    // Its late run (stopped and resumed, perhaps: each of those told in its turn), then, if that could
    // not finish within DIGEST_CATCHUP_HOURS, its miss: told, and no notice twice.
    const naming = missedNotices.filter((n) => `${n.subject}\n${n.text}`.includes(mark));
    const missed = naming.filter((n) => n.subject.includes('Missed: ')).length;
    // Each backup restored from before a notice took that notice's record with it: told again, rightly.
    const forgotten = restoresForgetting(run, naming.map((n) => n.at.getTime()));
    if (naming.length === 0 || missed > 1 + forgotten || new Set(naming.map((n) => n.subject)).size + forgotten < naming.length) {
      violations.push({ invariant: 'each missed or late tick told once', detail: `the ${mark} tick fell while no server ran; ${naming.length} notices told it (${missed} of them "Missed")` });
    }
  }
  for (const notice of missedNotices) {
    const mark = /(?:Missed: the|Late: the) (\d{4}-\d\d-\d\d \d\d:\d\d UTC) run/.exec(`${notice.subject}\n${notice.text}`)?.[1];
    // A moved DIGEST_CRON's own ticks are no week's tick of the model: true when no server was up at it.
    if (mark && !told.has(mark) && upAcross(run.model.uptime, Date.parse(mark.replace(' UTC', ':00Z').replace(' ', 'T')))) violations.push({ invariant: 'each missed or late tick told once', detail: `a notice said no server ran at the ${mark} tick, but one did: ${notice.subject}` });
  }
  for (const notice of notices.filter((n) => n.subject.includes('Missed: '))) {
    const recap = / the (\d{4}-\d\d-\d\d) recap not sent/.exec(notice.subject)?.[1];
    const sentAfter = run.provider.accepted.find((m) => m.recap === recap && m.at.getTime() > notice.at.getTime());
    if (recap && sentAfter) {
      violations.push({ invariant: 'a week told missed is not sent late', detail: `${notice.subject} at ${utc(notice.at.getTime())}; the week of ${recap} then went to ${sentAfter.to} at ${utc(sentAfter.at.getTime())}, unmarked` });
    }
  }
  const held = run.trace.notices.filter((n) => n.subject === 'HELD');
  // A hold's notice is queued with its record, so a worker killed before its log line still told it.
  const queuedHolds = notices.filter((n) => n.subject.startsWith('[Launched Weekly] E-mail held:'));
  const within = (hold: { from: number; to: number }, list: readonly { at: Date }[]) => list.filter((n) => n.at.getTime() >= hold.from && n.at.getTime() <= hold.to).map((n) => n.at.getTime());
  for (const hold of holdsOfMail(run)) {
    // Told when a server tried the mail during it and lived on: one that died as it met the refusal,
    // or a server up that never tried (its outbox asleep until its next poll), met a hold that
    // nobody could tell.
    const metByAServer = run.provider.events.some((event) => {
      const at = Date.parse(event.at);
      const life = run.model.uptime.find((l) => l.replica === event.replica);
      return event.answer === 'sender refused' && event.key.startsWith('outbox/') && at >= hold.from && at <= hold.to && life !== undefined && life.to > at;
    });
    if (!hold.mailQueued || !metByAServer) continue;
    const logged = within(hold, held);
    const queued = within(hold, queuedHolds);
    const told = logged.length >= queued.length ? logged : queued;
    // A backup restored after the hold was told, from before it was, takes the record of the hold
    // with it: the database knows no hold, and telling it again is right.
    const forgotten = restoresForgetting(run, told);
    const count = told.length;
    if (count < 1 || count > 1 + forgotten) violations.push({ invariant: 'each hold of mail told once', detail: `the provider refused the sender from ${utc(hold.from)} with mail queued; the log told it ${count} times` });
  }
}

/**
 * The holds the outbox sees: one lasts from a refusal until the provider next accepts a message,
 * so a refusal that begins before then (a quota used up again before anything went out) continues it.
 */
function holdsOfMail(run: ScenarioRun): { from: number; to: number; mailQueued: boolean }[] {
  const acceptedAfter = (at: number) => Math.min(...run.provider.accepted.map((m) => m.at.getTime()).filter((t) => t >= at));
  const holds: { from: number; to: number; mailQueued: boolean }[] = [];
  for (const refusal of [...run.model.refusals].sort((a, b) => a.from - b.from)) {
    const last = holds.at(-1);
    if (last && refusal.from <= acceptedAfter(last.to)) {
      last.to = Math.max(last.to, refusal.to);
      last.mailQueued ||= refusal.mailQueued;
    } else holds.push({ from: refusal.from, to: refusal.to, mailQueued: refusal.mailQueued });
  }
  return holds;
}

export async function checkInvariants(db: SimDatabase, run: ScenarioRun): Promise<Violation[]> {
  const violations: Violation[] = [];
  const notices = await operatorNotices(db, run);
  const emails: EmailsById = new Map((await db.sql.query<{ id: string; email: string }>('select id::text as id, email from public.email_signups')).rows.map((r) => [r.id, r.email]));
  digestChecks(run, await unknownForGoodReason(db, run, emails, notices, violations), violations);
  await ledgerChecks(db, run, emails, violations);
  noticeChecks(run, notices, violations);
  return violations;
}
