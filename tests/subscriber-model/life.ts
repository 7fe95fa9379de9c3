// A subscriber's life as fast-check model-based commands: every command is one event of
// server/subscribers/lifecycle.ts, driven through the app's real routes (or, for the operator's
// import, delete and the pending prune, the store operations their commands call), and after it
// the store's rows and the e-mails it queued are held against the table and the invariants.
import fc from 'fast-check';
import { expect } from 'vitest';
import { SIGNUPS_PER_ADDRESS_PER_DAY } from '../../server/abuse/signup-screen.ts';
import { mailboxKey } from '../../server/subscribers/mailbox-key.ts';
import { EVENT_TEXT, isRowless, LINK_HOLDER_MAILS_PER_WEEK, next, type LifeEvent, type LifeState } from '../../server/subscribers/lifecycle.ts';
import {
  agedPrune,
  importActive,
  keptSpellings,
  leftOfMailbox,
  lifeSpellings,
  mergeLegacySpelling,
  operatorDelete,
  postFooter,
  postOneClick,
  postProviderEvent,
  postSignup,
  pressLink,
  readStep,
  stored,
  type LifeSystem,
  type MailedLink,
  type Mode,
  type QueuedMail,
  type RowState,
} from './system.ts';

interface ReaderModel {
  state: LifeState;
  welcomed: boolean;
  /** Mail caused by anyone holding a link (the footer page's buttons). */
  holderMails: number;
  /** Row changes so far: a link mailed before the last one is old. */
  changes: number;
  /** The owner confirmed a row of this mailbox once (a confirmation or fresh link followed); a delete forgets it. */
  confirmed: boolean;
  /** Signups posted for the mailbox in any spelling: all of a life falls within one day's limit window. */
  signups: number;
  /** The reader whose share link created this row (null once that reader's row is gone). */
  referredBy: number | null;
  /** The row was active at some point: from then on it counts for its referrer. */
  everActive: boolean;
  /** The row's referrals reached the milestone (1) and were thanked for it. */
  thanked: boolean;
}

interface HeldLink extends MailedLink {
  reader: number;
  changesAtMail: number;
  used: boolean;
}

export interface LifeModel {
  mode: Mode;
  readers: ReaderModel[];
  links: HeldLink[];
}

export interface LifeReal {
  system: LifeSystem;
  spellings: string[][];
  /** Every row id each reader had, so mail to a row deleted since is still theirs. */
  ids: Map<string, number>;
  /** The readers' rows after the last step: only this life's steps change them. */
  rows?: RowState[][];
  /** Ids of legacy rows merged into each reader's row, newest last. */
  merged: Map<number, string[]>;
  /** Every share code each reader's rows had, so a replaced or deleted one can be tried. */
  codes: Map<number, Set<string>>;
}

/** What an act answered; `skipped` when it had nothing to act with (no link of that kind held). */
type Act = (
  real: LifeReal,
  rows: RowState[][],
) => Promise<{ status?: number; body?: string; skipped?: true; refused?: true; /** The share link's owner, when its code was current. */ creditTo?: number } | void>;


/**
 * The referral rules of lifecycle.ts's "Referral credit" beside the table's transition: whom a
 * created row is credited to, which credit appears now (the row's first activation), and the
 * thanks that credit is due. Returns the reader to be thanked, if any.
 */
function referralStep(model: LifeModel, reader: number, next: LifeState, creditTo: number | undefined): number | null {
  const modelReader = model.readers[reader]!;
  if (isRowless(next)) {
    // A deleted row takes its credit with it; a deleted referrer leaves nobody credited.
    Object.assign(modelReader, { referredBy: null, everActive: false, thanked: false });
    for (const other of model.readers) if (other.referredBy === reader) other.referredBy = null;
    return null;
  }
  if (isRowless(modelReader.state) && creditTo !== undefined && !isRowless(model.readers[creditTo]!.state)) modelReader.referredBy = creditTo;
  if (next !== 'active' || modelReader.everActive) return null;
  modelReader.everActive = true;
  const referrer = modelReader.referredBy === null ? null : model.readers[modelReader.referredBy]!;
  if (!referrer || referrer.thanked) return null;
  referrer.thanked = true;
  return referrer.state === 'active' ? modelReader.referredBy : null;
}

/** Each row's credited readers, and whose link created it, as the model has them. */
function checkReferrals(model: LifeModel, rows: RowState[][], where: string): void {
  for (const [r, list] of rows.entries()) {
    const row = list[0];
    if (!row) continue;
    const credited = model.readers.filter((other, s) => s !== r && other.referredBy === r && other.everActive && rows[s]![0]).length;
    expect(row.referrals, `readers credited to reader ${r} after ${where}`).toBe(credited);
    const referrer = model.readers[r]!.referredBy;
    expect(row.referredBy, `whose link created reader ${r}'s row, after ${where}`).toBe(referrer === null ? null : (rows[referrer]![0]?.id ?? null));
  }
}

/** Runs one event: the act on the system, then every check of the table and the invariants. */
async function step(model: LifeModel, real: LifeReal, reader: number, event: LifeEvent, act: Act): Promise<void> {
  const before = real.rows ?? (await readStep(real.system, real.spellings, () => () => undefined)).rows;
  const answer = await act(real, before);
  // A limit that refused the request (429, or a mailbox over its signup limit) is no event at all.
  const happened = answer?.status !== 429 && !answer?.skipped && !answer?.refused;
  const modelReader = model.readers[reader]!;
  const expected = happened ? next(modelReader.state, event) : { next: modelReader.state, mail: 'none' as const };
  const { rows: after, mails } = await readStep(real.system, real.spellings, (rows) => {
    for (const [r, list] of [...before.entries(), ...rows.entries()]) for (const row of list) real.ids.set(row.id, r);
    return (id) => real.ids.get(id);
  });
  real.rows = after;
  // Legacy rows go with the row they were merged into.
  for (const r of after.keys()) if (after[r]![0]?.id !== before[r]![0]?.id) real.merged.delete(r);
  const where = `${EVENT_TEXT[event].text} (reader ${reader}, from ${modelReader.state})`;
  for (const [r, rows] of after.entries()) for (const row of rows) real.codes.set(r, (real.codes.get(r) ?? new Set()).add(row.shareCode));

  const thanksTo = happened ? referralStep(model, reader, expected.next, answer?.creditTo) : null;
  checkMail(model, reader, event, expected, mails, where, thanksTo);
  for (const [r, rows] of after.entries()) {
    expect(rows.length, `at most one row per mailbox, after ${where}`).toBeLessThanOrEqual(1);
    const wanted = r === reader ? expected.next : model.readers[r]!.state;
    expect(rows[0]?.status ?? 'no row', `reader ${r}'s row after ${where}`).toBe(isRowless(wanted) ? 'no row' : wanted);
  }
  if (EVENT_TEXT[event].actor === 'link holder' && before[reader]![0]?.status !== after[reader]![0]?.status) {
    expect(after[reader]![0]?.status ?? 'no row', `a link holder can only unsubscribe, after ${where}`).toBe('unsubscribed');
  }
  await checkData(real, reader, event, before[reader]![0], answer?.body);

  if (expected.next !== modelReader.state) {
    modelReader.changes += 1;
    if (isRowless(expected.next)) {
      modelReader.welcomed = false;
      modelReader.confirmed = false;
    }
  }
  if (expected.next === 'active' && (event === 'confirm-current' || event === 'fresh-resubscribe')) modelReader.confirmed = true;
  modelReader.state = expected.next;
  checkReferrals(model, after, where);
  for (const mail of mails) {
    if (mail.kind === 'welcome') model.readers[mail.reader]!.welcomed = true;
    if (mail.link) model.links.push({ ...mail.link, reader: mail.reader, changesAtMail: model.readers[mail.reader]!.changes, used: false });
  }
}

/** The e-mails of a step: what the table says, to whom it says, within the link holders' budget. */
function checkMail(model: LifeModel, reader: number, event: LifeEvent, expected: ReturnType<typeof next>, mails: QueuedMail[], where: string, thanksTo: number | null): void {
  const thanks = mails.filter((mail) => mail.kind === 'referral-thanks').map((mail) => mail.reader);
  expect(thanks, `referral thanks after ${where}`).toEqual(thanksTo === null ? [] : [thanksTo]);
  const others = mails.filter((mail) => mail.reader !== reader && mail.kind !== 'referral-thanks');
  expect(others, `mail to another mailbox after ${where}`).toEqual([]);
  const mine = mails.filter((mail) => mail.reader === reader && mail.kind !== 'referral-thanks').map((mail) => mail.kind);
  const modelReader = model.readers[reader]!;
  let wanted: string[] = [];
  if (expected.mail === 'welcome') wanted = modelReader.welcomed ? [] : ['welcome'];
  else if (expected.mail === 'confirmation' || expected.mail === 'fresh-link') wanted = [expected.mail];
  if (expected.throttled && mine.length === 0) wanted = [];
  expect(mine, `mail after ${where}`).toEqual(wanted);
  const suppressed = modelReader.state === 'complained' || modelReader.state === 'none-complained';
  if (suppressed && mine.length > 0) expect(event, `a complained mailbox mailed after ${where}`).toMatch(/^footer-|^confirm-current$/);
  if (EVENT_TEXT[event].actor === 'link holder') {
    modelReader.holderMails += mine.length;
    expect(modelReader.holderMails, `e-mails caused by link holders to one mailbox, after ${where}`).toBeLessThanOrEqual(LINK_HOLDER_MAILS_PER_WEEK);
  }
}

/** Download holds every spelling the store keeps; delete leaves nothing of the mailbox. */
async function checkData(real: LifeReal, reader: number, event: LifeEvent, row: RowState | undefined, body: string | undefined): Promise<void> {
  if (event === 'fresh-download' && row) {
    for (const spelling of await keptSpellings(real.system, row)) expect(body, 'the data download').toContain(spelling);
  }
  if (event === 'fresh-delete' || event === 'operator-delete') {
    const rowIds = [...[...real.ids].filter(([, owner]) => owner === reader).map(([id]) => id), ...(real.merged.get(reader) ?? [])];
    expect(await leftOfMailbox(real.system, mailboxKey(real.spellings[reader]![0]!), rowIds), 'rows left of a deleted mailbox').toBe(0);
  }
}

const rowOf = (rows: RowState[][], reader: number) => rows[reader]![0];
const READERS = 2;
const SPELLINGS = 4;
// The first reader more often than the others, so short lives reach deep into one mailbox's life
// while the others check that nothing spills over.
const reader = fc.constantFrom(0, 0, ...Array.from({ length: READERS - 1 }, (_, r) => r + 1));
const spelling = fc.nat({ max: SPELLINGS - 1 });

export class Signup implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly reader: number, readonly spelling: number) {}
  check = () => true;
  run(model: LifeModel, real: LifeReal) {
    model.readers[this.reader]!.signups += 1;
    // Over the mailbox's daily limit a signup is no event: single mode answers 429, double mode the
    // same 202 as any signup, so a bot spraying spellings learns nothing.
    const overLimit = model.readers[this.reader]!.signups > SIGNUPS_PER_ADDRESS_PER_DAY;
    return step(model, real, this.reader, model.mode === 'single' ? 'signup-single' : 'signup-double', async () => {
      const status = await postSignup(real.system, model.mode, real.spellings[this.reader]![this.spelling]!);
      if (overLimit) expect(status, 'a signup over the mailbox limit').toBe(model.mode === 'single' ? 429 : 202);
      return { status, ...(overLimit ? { refused: true as const } : {}) };
    });
  }
  toString = () => `signup(reader ${this.reader}, spelling ${this.spelling})`;
}

/**
 * A signup through a share link: the code `referrer`'s row has now, or one it had before (replaced,
 * or of a row deleted since), or caught by the honeypot (no event: nothing is kept).
 */
export class SharedSignup implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(
    readonly reader: number,
    readonly spelling: number,
    readonly referrer: number,
    readonly code: 'current' | 'old',
    readonly trapped: boolean,
  ) {}
  check = () => true;
  run(model: LifeModel, real: LifeReal) {
    return step(model, real, this.reader, model.mode === 'single' ? 'signup-shared-single' : 'signup-shared-double', async (_, rows) => {
      const current = rowOf(rows, this.referrer)?.shareCode;
      const code = this.code === 'current' ? current : [...(real.codes.get(this.referrer) ?? [])].find((seen) => seen !== current);
      if (code === undefined) return { skipped: true };
      // The honeypot answers before anything is counted against the mailbox.
      if (!this.trapped) model.readers[this.reader]!.signups += 1;
      const overLimit = !this.trapped && model.readers[this.reader]!.signups > SIGNUPS_PER_ADDRESS_PER_DAY;
      const status = await postSignup(real.system, model.mode, real.spellings[this.reader]![this.spelling]!, { share: code, trap: this.trapped });
      if (overLimit) expect(status, 'a signup over the mailbox limit').toBe(model.mode === 'single' ? 429 : 202);
      return { status, ...(overLimit || this.trapped ? { refused: true as const } : {}), ...(code === current ? { creditTo: this.referrer } : {}) };
    });
  }
  toString = () => `sharedSignup(reader ${this.reader}, spelling ${this.spelling}, ${this.code} code of reader ${this.referrer}${this.trapped ? ', honeypot filled' : ''})`;
}

const FOOTER_ACTIONS = ['unsubscribe', 'resubscribe', 'download', 'delete', 'replace-share'] as const;

/** The footer page's button, pressed `presses` times in a row (a forwarded digest in several hands). */
export class Footer implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly reader: number, readonly action: (typeof FOOTER_ACTIONS)[number], readonly presses = 1) {}
  check = () => true;
  async run(model: LifeModel, real: LifeReal) {
    const event: LifeEvent = this.action === 'resubscribe' ? `footer-resubscribe-${model.mode}` : `footer-${this.action}`;
    for (let press = 0; press < this.presses; press += 1) {
      await step(model, real, this.reader, event, async (_, rows) => {
        const row = rowOf(rows, this.reader);
        if (row) return { status: await postFooter(real.system, model.mode, row.id, this.action) };
      });
    }
  }
  toString = () => `footer(reader ${this.reader}, ${this.action}${this.presses > 1 ? ` ×${this.presses}` : ''})`;
}

/** One-click unsubscribe from a digest: the row's own link, or one mailed before a legacy row was merged into it. */
export class OneClick implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly reader: number, readonly fromBeforeMerge: boolean) {}
  check = () => true;
  run = (model: LifeModel, real: LifeReal) =>
    step(model, real, this.reader, 'one-click-unsubscribe', async (_, rows) => {
      const row = rowOf(rows, this.reader);
      const id = this.fromBeforeMerge ? real.merged.get(this.reader)?.at(-1) : row?.id;
      if (this.fromBeforeMerge && !id) return { skipped: true };
      if (row && id) return { status: await postOneClick(real.system, id) };
    });
  toString = () => `oneClickUnsubscribe(reader ${this.reader}${this.fromBeforeMerge ? ', a link mailed before the merge' : ''})`;
}

/**
 * A legacy list's row of another spelling, merged into the reader's row as the one-row-per-mailbox
 * migration does: no event of the table (the state stays), but the download must hold it, the
 * delete remove it, and its old links keep working for the mailbox.
 */
export class LegacySpelling implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly reader: number, readonly spelling: number) {}
  check = () => true;
  async run(model: LifeModel, real: LifeReal) {
    const row = rowOf(real.rows ?? (await readStep(real.system, real.spellings, () => () => undefined)).rows, this.reader);
    if (!row) return;
    const id = await mergeLegacySpelling(real.system, row, real.spellings[this.reader]![this.spelling]!);
    real.merged.set(this.reader, [...(real.merged.get(this.reader) ?? []), id]);
  }
  toString = () => `legacySpellingMerged(reader ${this.reader}, spelling ${this.spelling})`;
}

/** Presses a link held from an earlier e-mail: current only when the row has not changed since and it is unused. */
function pressHeld(model: LifeModel, real: LifeReal, link: HeldLink): Promise<void> {
  const owner = model.readers[link.reader]!;
  const current = link.changesAtMail === owner.changes && !link.used;
  const event: LifeEvent = link.kind === 'confirm' ? (current ? 'confirm-current' : 'confirm-old') : current ? (`fresh-${link.purpose!}` as LifeEvent) : 'fresh-old';
  return step(model, real, link.reader, event, async () => {
    const answer = await pressLink(real.system, model.mode, link);
    if (link.kind === 'link') link.used = true;
    return answer;
  });
}

/** Presses a link the system mailed earlier in this life: the newest of its kind, or an older one. */
export class PressLink implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly pick: number, readonly kind: 'confirm' | 'link') {}
  check = (model: Readonly<LifeModel>) => model.links.some((link) => link.kind === this.kind);
  run(model: LifeModel, real: LifeReal) {
    const held = model.links.filter((link) => link.kind === this.kind);
    return pressHeld(model, real, held[held.length - 1 - (this.pick % held.length)]!);
  }
  toString = () => `press(${this.kind}, ${this.pick === 0 ? 'newest' : `${this.pick} back`})`;
}

/**
 * A reader who signed up and confirmed (in single mode the signup is the confirmation), and who
 * then perhaps left: several events in one command, each checked, so a short life reaches what a
 * confirmed reader can lose.
 */
export class ConfirmedReader implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly reader: number, readonly spelling: number, readonly thenLeave: boolean) {}
  check = () => true;
  async run(model: LifeModel, real: LifeReal) {
    await new Signup(this.reader, this.spelling).run(model, real);
    const confirmation = model.links.findLast((link) => link.kind === 'confirm' && link.reader === this.reader);
    if (model.mode === 'double' && confirmation) await pressHeld(model, real, confirmation);
    if (this.thenLeave) await new Footer(this.reader, 'unsubscribe').run(model, real);
  }
  toString = () => `confirmedReader(reader ${this.reader}, spelling ${this.spelling}${this.thenLeave ? ', then unsubscribed' : ''})`;
}

export class ProviderReport implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly reader: number, readonly spelling: number, readonly type: 'email.bounced' | 'email.complained') {}
  check = (_model: Readonly<LifeModel>) => true;
  run(model: LifeModel, real: LifeReal) {
    const address = stored(real.spellings[this.reader]![this.spelling]!);
    return step(model, real, this.reader, this.type === 'email.complained' ? 'complaint' : 'bounce-delivery', async () => ({
      status: await postProviderEvent(real.system, this.type, address),
    }));
  }
  toString = () => `${this.type === 'email.bounced' ? 'bounce' : 'complaint'}(reader ${this.reader}, spelling ${this.spelling})`;
}

/**
 * A bounce is of the delivery address only when it names the row's own address, so it is decided at
 * run time.
 */
export class Bounce extends ProviderReport {
  constructor(reader: number, spelling: number) {
    super(reader, spelling, 'email.bounced');
  }
  override run(model: LifeModel, real: LifeReal) {
    const address = stored(real.spellings[this.reader]![this.spelling]!);
    return (async () => {
      const row = rowOf(real.rows ?? (await readStep(real.system, real.spellings, () => () => undefined)).rows, this.reader);
      const event: LifeEvent = row?.email === address ? 'bounce-delivery' : 'bounce-other';
      await step(model, real, this.reader, event, async () => ({ status: await postProviderEvent(real.system, 'email.bounced', address) }));
    })();
  }
}

export class Operator implements fc.AsyncCommand<LifeModel, LifeReal> {
  constructor(readonly reader: number, readonly spelling: number, readonly act: 'import' | 'operator-delete' | 'pending-prune') {}
  check = () => true;
  run = (model: LifeModel, real: LifeReal) =>
    step(model, real, this.reader, this.act === 'pending-prune' && model.readers[this.reader]!.confirmed ? 'pending-prune-confirmed-before' : this.act, async (_, rows) => {
      const row = rowOf(rows, this.reader);
      if (this.act === 'import') await importActive(real.system, real.spellings[this.reader]![this.spelling]!);
      else if (row && this.act === 'operator-delete') await operatorDelete(real.system, row);
      else if (row) await agedPrune(real.system, row);
    });
  toString = () => `${this.act}(reader ${this.reader}${this.act === 'import' ? `, spelling ${this.spelling}` : ''})`;
}

const confirmedReader = fc.tuple(reader, spelling, fc.boolean()).map(([r, s, leave]) => new ConfirmedReader(r, s, leave));
const footer = fc.tuple(reader, fc.constantFrom(...FOOTER_ACTIONS), fc.integer({ min: 1, max: LINK_HOLDER_MAILS_PER_WEEK + 1 })).map(([r, a, n]) => new Footer(r, a, n));

// fast-check picks among these evenly: the two that reach deepest are listed twice.
export const lifeCommands = [
  confirmedReader,
  confirmedReader,
  footer,
  footer,
  fc.tuple(reader, spelling).map(([r, s]) => new Signup(r, s)),
  fc
    .tuple(reader, spelling, fc.constantFrom(0, 1), fc.constantFrom('current' as const, 'current' as const, 'old' as const), fc.constantFrom(false, false, false, true))
    .map(([r, s, referrer, code, trapped]) => new SharedSignup(r, s, referrer, code, trapped)),
  fc.tuple(reader, fc.boolean()).map(([r, old]) => new OneClick(r, old)),
  fc.tuple(reader, spelling).map(([r, s]) => new LegacySpelling(r, s)),
  fc.tuple(fc.nat({ max: 2 }), fc.constantFrom('confirm' as const, 'link' as const)).map(([pick, kind]) => new PressLink(pick, kind)),
  fc.tuple(reader, spelling).map(([r, s]) => new Bounce(r, s)),
  fc.tuple(reader, spelling).map(([r, s]) => new ProviderReport(r, s, 'email.complained')),
  fc.tuple(reader, spelling, fc.constantFrom('import' as const, 'operator-delete' as const, 'pending-prune' as const)).map(([r, s, a]) => new Operator(r, s, a)),
];

/** Runs one life: a new pair of mailboxes, in one mode, through these commands in order. */
export async function runLife(system: LifeSystem, mode: Mode, commands: Iterable<fc.AsyncCommand<LifeModel, LifeReal>>): Promise<void> {
  system.lives += 1;
  const spellings = lifeSpellings(`${process.pid.toString(36)}${system.lives.toString(36)}${Math.random().toString(36).slice(2, 6)}`);
  const readers = spellings.map((): ReaderModel => ({ state: 'none', welcomed: false, holderMails: 0, changes: 0, signups: 0, confirmed: false, referredBy: null, everActive: false, thanked: false }));
  const model: LifeModel = { mode, readers, links: [] };
  await fc.asyncModelRun(() => ({ model, real: { system, spellings, ids: new Map(), merged: new Map(), codes: new Map() } }), commands);
}

/** One generated life: a mode, then a short sequence of events over a new pair of mailboxes. */
export function lifeProperty(system: LifeSystem, maxCommands: number) {
  const replayPath = process.env.SEED_COMMANDS;
  const commands = fc.commands(lifeCommands, { maxCommands, ...(replayPath ? { replayPath } : {}) });
  return fc.asyncProperty(fc.constantFrom<Mode>('single', 'double'), commands, (mode, run) => runLife(system, mode, run));
}

const DEFAULT_SEED = 20261128;

/**
 * fast-check's options for a run. A failure prints its seed, its path and, in the counterexample,
 * the commands' replayPath; SEED, SEED_PATH and SEED_COMMANDS replay it (the shell's PATH is taken).
 * fast-check shrinks a failure to its shortest sequence of events before printing it.
 */
export function runOptions(numRuns: number): fc.Parameters<unknown> {
  // The same lives in every run unless asked otherwise (SEED=random, as the bench does): a red
  // npm test is then the change's doing, and new ground is searched on purpose, not by chance.
  const seed = process.env.SEED === 'random' ? undefined : Number(process.env.SEED ?? DEFAULT_SEED);
  return { numRuns, ...(seed === undefined ? {} : { seed }), ...(process.env.SEED_PATH ? { path: process.env.SEED_PATH } : {}) };
}
