// Runs one plan: replicas sharing one database, one simulated clock and one provider, through its
// weeks, and writes down (the model) what the world did: who was on the list when, which servers
// ran when, when the provider refused the sender, when the database was restored. The invariants
// (invariants.ts) compare that model with what the provider received and what the store says.
import { createManualClock, type ManualClock } from '../../server/clock.ts';
import { storedMailboxKey, subscriberKeys } from '../../server/subscribers/subscriber-keys.ts';
import type { Store } from '../../server/store/types.ts';
import type { DatabaseTime, SimDatabase } from './database.ts';
import { killableStore, type KillableStore } from './killable-store.ts';
import { Dice, type Plan } from './plan.ts';
import { SimulatedProvider, type CallFault } from './provider.ts';
import { simulatedRecaps } from './recaps.ts';
import { nextTickAfter, SimReplica, type ReplicaConfig } from './replica.ts';
import { Trace } from './trace.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

export const SIM_SETTINGS = { freshnessDays: 6, catchUpHours: 6, resume: { firstMs: 60_000, maxMs: 4 * HOUR_MS }, leaseMs: 2 * MINUTE_MS, outboxPollMs: 12 * HOUR_MS, outboxRetryMaxSeconds: 1800 };

export type ReaderState = 'active' | 'pending' | 'unsubscribed' | 'bounced' | 'complained';

export interface Reader {
  email: string;
  id: string;
  /** Each change of state, in time order. */
  states: { at: number; state: ReaderState }[];
}

export interface WeekModel {
  recap: string;
  tick: number;
  freshEnd: number;
}

export interface Interval {
  from: number;
  to: number;
}

export interface ScenarioModel {
  end: number;
  weeks: WeekModel[];
  readers: Map<string, Reader>;
  /** Every replica's lives, each from its start to its kill or stop. */
  uptime: (Interval & { replica: string })[];
  starts: number[];
  /** `mailQueued`: whether mail was promised while it refused. */
  refusals: (Interval & { forever: boolean; mailQueued: boolean })[];
  restores: Interval[];
  /**
   * Digest batches whose attempt a replica recorded and then died before its request could leave:
   * to the code, an attempt whose answer was lost.
   */
  attemptsCutShort: Set<string>;
}

export interface ScenarioRun {
  plan: Plan;
  model: ScenarioModel;
  provider: SimulatedProvider;
  trace: Trace;
  /** Gives the database its own time back. */
  releaseTime(): Promise<void>;
}

export const stateAt = (reader: Reader, at: number): ReaderState | null => {
  let state: ReaderState | null = null;
  for (const change of reader.states) if (change.at <= at) state = change.state;
  return state;
};

interface Slot {
  index: number;
  lives: number;
  replica: SimReplica | null;
  killable: KillableStore | null;
  since: number;
  /** Down on purpose (an outage): no restart before it ends. */
  heldDownUntil: number;
}

class ScenarioRunner {
  readonly clock: ManualClock;
  readonly trace: Trace;
  readonly provider: SimulatedProvider;
  readonly dice: Dice;
  readonly model: ScenarioModel;
  private time: DatabaseTime | null = null;
  private config: ReplicaConfig;
  private readonly slots: Slot[];
  private readonly recaps;
  private faultPercent = 0;
  private readonly forcedDigestFaults: CallFault[];
  private readonly keys;
  private readonly start: Date;
  private backupModel: Map<string, Reader> | null = null;

  constructor(
    private readonly db: SimDatabase,
    private readonly plan: Plan,
  ) {
    this.start = new Date(`${plan.start}T00:00:00Z`);
    this.clock = createManualClock(new Date(this.start.getTime() - MINUTE_MS));
    this.trace = new Trace(() => this.clock.now());
    this.dice = new Dice(plan.seed);
    this.provider = new SimulatedProvider(this.clock, (key) => this.fault(key));
    this.forcedDigestFaults = [...(plan.digestFaults ?? [])];
    this.recaps = simulatedRecaps(new Date(this.start.getTime() + 2 * DAY_MS), plan.weeks.length);
    this.config = { cron: plan.cron, timezone: plan.timezone, operatorEmail: 'operator@launched.test', ...SIM_SETTINGS };
    this.slots = Array.from({ length: plan.replicas }, (_, index) => ({ index, lives: 0, replica: null, killable: null, since: 0, heldDownUntil: 0 }));
    this.keys = subscriberKeys('simulation-secret', [], storedMailboxKey(db.store));
    this.model = { end: this.start.getTime() + plan.weeks.length * 7 * DAY_MS, weeks: [], readers: new Map(), uptime: [], starts: [], refusals: [], restores: [], attemptsCutShort: new Set() };
  }

  private fault(key: string): CallFault {
    if (key.startsWith('digest-') && this.forcedDigestFaults.length > 0) return this.forcedDigestFaults.shift()!;
    if (!this.dice.chance(this.faultPercent)) return 'ok';
    return this.dice.pick<CallFault>(['timeout', 'rate-limited', 'server-error', 'concurrent-409']);
  }

  private get base(): Store {
    return this.db.store;
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private at(when: number, what: () => Promise<void>): void {
    this.clock.setTimer(what, Math.max(0, when - this.now()));
  }

  // ---- replicas ----

  private async startSlot(slot: Slot): Promise<void> {
    if (slot.replica || this.now() >= this.model.end) return;
    slot.lives++;
    const name = `r${slot.index}.${slot.lives}`;
    const forced = this.plan.kills?.find((k) => k.life === name) ?? null;
    // Half the deaths fall among a life's first calls: a crash loop dies at start-up.
    const drawn = this.dice.chance(this.plan.killPercent) ? { atCall: this.dice.int(1, this.dice.chance(50) ? 10 : 70), when: this.dice.pick(['before', 'after'] as const) } : null;
    const kill = forced ?? drawn;
    const killable = killableStore(this.base, this.time!, kill, (call, last) => {
      if (last?.name === 'beginDigestBatchAttempt') this.model.attemptsCutShort.add(String(last.args[0]));
      this.onKilled(slot, call, forced?.restartAfterMinutes);
    });
    const replica = new SimReplica({ name, clock: this.clock, store: killable.store, mailer: this.provider.mailerFor(name, killable.alive), alive: killable.alive, recaps: this.recaps, trace: this.trace, config: { ...this.config } });
    slot.replica = replica;
    slot.killable = killable;
    slot.since = this.now();
    this.model.starts.push(this.now());
    this.trace.add(name, `START cron "${this.config.cron}" ${this.config.timezone}${kill ? ` (dies at store call ${kill.atCall}, ${kill.when} it)` : ''}`);
    await replica.start();
  }

  private endLife(slot: Slot): void {
    this.model.uptime.push({ from: slot.since, to: this.now(), replica: slot.replica?.name ?? `r${slot.index}` });
    slot.replica?.stop();
    slot.replica = null;
    slot.killable = null;
  }

  private onKilled(slot: Slot, call: string, restartAfterMinutes?: number): void {
    const name = slot.replica?.name ?? `r${slot.index}`;
    this.trace.add(name, `KILLED at store call ${call}`);
    this.endLife(slot);
    const drawn = this.dice.pick([() => this.dice.int(1, 20) * MINUTE_MS, () => this.dice.int(1, 8) * HOUR_MS, () => this.dice.int(24, 48) * HOUR_MS, () => this.dice.int(1, 20) * MINUTE_MS])();
    const delay = restartAfterMinutes === undefined ? drawn : restartAfterMinutes * MINUTE_MS;
    const when = Math.max(this.now() + delay, slot.heldDownUntil);
    this.at(when, () => this.startSlot(slot));
  }

  private stopSlot(slot: Slot, killed: boolean): void {
    if (!slot.replica) return;
    if (killed) slot.killable?.kill();
    else {
      this.trace.add(slot.replica.name, 'STOP (deploy or shutdown)');
      this.endLife(slot);
    }
  }

  private upSlots(): Slot[] {
    return this.slots.filter((slot) => slot.replica !== null);
  }

  // ---- the list ----

  private address(): string {
    return `reader-${this.model.readers.size + 1}-${this.dice.int(1000, 9999)}@example.com`;
  }

  private record(email: string, id: string, state: ReaderState): void {
    const reader = this.model.readers.get(email) ?? { email, id, states: [] };
    reader.id = id;
    reader.states.push({ at: this.now(), state });
    this.model.readers.set(email, reader);
  }

  private readersIn(state: ReaderState): Reader[] {
    return [...this.model.readers.values()].filter((reader) => stateAt(reader, this.now()) === state);
  }

  private async join(mode: 'single' | 'double', email = this.address()): Promise<void> {
    const serving = this.upSlots();
    if (serving.length === 0) return; // a signup needs a server
    const decision = await this.base.signUp({ email, source: '/', mode, networkHash: null, addressHashes: await this.keys.addressHashes(email) });
    const previous = this.model.readers.get(email);
    const suppressed = previous && ['bounced', 'complained'].includes(stateAt(previous, this.now()) ?? '');
    this.trace.add('list', `${mode} signup ${email}: ${decision.outcome}`);
    if (suppressed) return; // stays suppressed until its owner confirms
    this.record(email, decision.subscriberId, mode === 'single' ? 'active' : 'pending');
    if (mode === 'double') {
      await this.dice.pick(serving).replica!.deliverOutbox();
      this.at(this.now() + this.dice.int(1, 12) * HOUR_MS, () => this.confirm(email, 0));
    }
  }

  /** The reader clicks the link once the confirmation has reached them. */
  private async confirm(email: string, tries: number): Promise<void> {
    const reader = this.model.readers.get(email);
    if (!reader || stateAt(reader, this.now()) !== 'pending') return;
    if (!this.provider.to(email).some((m) => m.kind === 'confirm')) {
      if (tries < 12) this.at(this.now() + 6 * HOUR_MS, () => this.confirm(email, tries + 1));
      return;
    }
    if (this.upSlots().length === 0) return void this.at(this.now() + HOUR_MS, () => this.confirm(email, tries));
    const activation = await this.base.activateSubscriber(reader.id, 'confirmation', null);
    this.trace.add('list', `confirmed ${email}: ${activation ? 'active' : 'no change'}`);
    if (activation) this.record(email, reader.id, 'active');
  }

  private async leave(reason: 'unsubscribed' | 'bounced' | 'complained'): Promise<void> {
    const active = this.readersIn('active');
    if (active.length === 0) return;
    const reader = this.dice.pick(active);
    await this.base.removeSubscriber(reader.id, reason);
    this.trace.add('list', `${reason} ${reader.email}`);
    this.record(reader.email, reader.id, reason);
  }

  private async rejoinSuppressed(): Promise<void> {
    const suppressed = [...this.readersIn('bounced'), ...this.readersIn('complained')];
    if (suppressed.length > 0) await this.join('single', this.dice.pick(suppressed).email);
  }

  // ---- the weeks ----

  private scheduleWeek(index: number): void {
    const week = this.plan.weeks[index]!;
    const saturday = this.start.getTime() + index * 7 * DAY_MS;
    this.at(saturday + MINUTE_MS, async () => {
      if (week.deploy) {
        this.config = { ...this.config, ...week.deploy };
        this.trace.add('ops', `DEPLOY DIGEST_CRON="${week.deploy.cron}" DIGEST_TZ=${week.deploy.timezone}`);
        for (const slot of this.upSlots()) this.stopSlot(slot, false);
        for (const slot of this.slots) if (slot.heldDownUntil <= this.now()) await this.startSlot(slot);
      }
      this.faultPercent = week.faultPercent;
      const tick = nextTickAfter(this.config.cron, this.config.timezone, new Date(saturday))!.getTime();
      const recap = this.recaps[index]!.date;
      this.model.weeks.push({ recap, tick, freshEnd: Date.parse(`${recap}T00:00:00Z`) + SIM_SETTINGS.freshnessDays * DAY_MS });
      this.trace.add('ops', `WEEK ${recap}: tick ${new Date(tick).toISOString()}`);
      this.scheduleWeekEvents(week, tick, saturday);
      for (const departure of this.plan.departures ?? []) {
        if (departure.week === index) this.at(tick + departure.afterTickMinutes * MINUTE_MS, () => this.leave(departure.reason));
      }
    });
  }

  private scheduleWeekEvents(week: Plan['weeks'][number], tick: number, saturday: number): void {
    const during = () => saturday + 2 * HOUR_MS + this.dice.int(0, 6 * 24 * 60) * MINUTE_MS;
    for (let i = 0; i < week.joins; i++) this.at(during(), () => this.join('single'));
    for (let i = 0; i < week.doubleJoins; i++) this.at(during(), () => this.join('double'));
    for (let i = 0; i < week.leaves; i++) this.at(during(), () => this.leave('unsubscribed'));
    for (let i = 0; i < week.bounces; i++) this.at(during(), () => this.leave(this.dice.pick(['bounced', 'complained'] as const)));
    if (week.suppressedRejoin) this.at(during(), () => this.rejoinSuppressed());
    if (week.outage) this.scheduleOutage(week.outage, tick);
    if (week.refusal) this.scheduleRefusal(week.refusal, tick);
    if (week.restore) this.scheduleRestore(week.restore, tick);
  }

  private scheduleOutage(outage: NonNullable<Plan['weeks'][number]['outage']>, tick: number): void {
    const from = tick - outage.beforeTickMinutes * MINUTE_MS;
    const to = from + outage.minutes * MINUTE_MS;
    this.at(from, async () => {
      this.trace.add('ops', `OUTAGE until ${new Date(to).toISOString()} (${outage.killed ? 'killed' : 'stopped'})`);
      for (const slot of this.slots) slot.heldDownUntil = to;
      for (const slot of this.upSlots()) this.stopSlot(slot, outage.killed);
    });
    this.at(to, async () => {
      for (const slot of this.slots) if (slot.heldDownUntil <= this.now()) await this.startSlot(slot);
    });
  }

  private scheduleRefusal(refusal: NonNullable<Plan['weeks'][number]['refusal']>, tick: number): void {
    const from = tick + refusal.afterTickHours * HOUR_MS;
    const to = refusal.kind === 'forever' ? Number.POSITIVE_INFINITY : from + (refusal.hours ?? this.dice.int(20, 34)) * HOUR_MS;
    this.at(from, async () => {
      this.provider.refuseSender(refusal.kind === 'forever' ? 'forever' : new Date(to), refusal.kind === 'forever' ? 'API key revoked' : 'daily quota used up');
      // The provider keeps one refusal at a time: this one replaces any still in force.
      for (const earlier of this.model.refusals.filter((r) => r.to > from)) Object.assign(earlier, { to: from, forever: false });
      const entry: ScenarioModel['refusals'][number] = { from, to, forever: refusal.kind === 'forever', mailQueued: false };
      this.model.refusals.push(entry);
      this.trace.add('ops', `PROVIDER refuses the sender ${refusal.kind === 'forever' ? 'for good' : `until ${new Date(to).toISOString()}`}`);
      // Mail promised while it refuses: the hold and its notice are then due.
      this.at(this.now() + 10 * MINUTE_MS, async () => {
        const before = this.model.readers.size;
        await this.join('double');
        if (this.model.readers.size > before) entry.mailQueued = true;
      });
    });
  }

  private scheduleRestore(restore: NonNullable<Plan['weeks'][number]['restore']>, tick: number): void {
    const from = tick + restore.afterTickHours * HOUR_MS;
    const to = from + restore.minutesLater * MINUTE_MS;
    this.at(from, async () => {
      await this.db.backup();
      this.backupModel = new Map([...this.model.readers].map(([email, reader]) => [email, { ...reader, states: [...reader.states] }]));
      this.trace.add('ops', 'BACKUP taken');
      for (let i = 0; i < 3; i++) this.at(from + this.dice.int(1, restore.minutesLater - 1) * MINUTE_MS, () => this.join('double'));
    });
    this.at(to, async () => {
      await this.db.restore();
      if (this.backupModel) this.model.readers = this.backupModel;
      this.model.restores.push({ from, to });
      this.trace.add('ops', 'RESTORE of the backup');
      for (let i = 0; i < 3; i++) this.at(to + this.dice.int(1, 30) * MINUTE_MS, () => this.join('double'));
    });
  }

  async run(): Promise<void> {
    const time = (this.time = await this.db.followClock(this.clock));
    for (let i = 0; i < this.plan.initialReaders; i++) {
      const email = this.address();
      const decision = await this.base.signUp({ email, source: '/', mode: 'single', networkHash: null, addressHashes: await this.keys.addressHashes(email) });
      this.record(email, decision.subscriberId, 'active');
    }
    await this.clock.advanceTo(this.start);
    for (const slot of this.slots) await this.startSlot(slot);
    this.plan.weeks.forEach((_, index) => this.scheduleWeek(index));
    await this.clock.advanceTo(new Date(this.model.end));
    for (const slot of this.upSlots()) this.endLife(slot);
    await time.catchUp();
  }

  async releaseTime(): Promise<void> {
    await this.time?.release();
  }
}

/** Runs `plan`; the database keeps the scenario's time until the run's `release`, after its checks. */
export async function runScenario(db: SimDatabase, plan: Plan): Promise<ScenarioRun> {
  await db.reset();
  const runner = new ScenarioRunner(db, plan);
  try {
    await runner.run();
  } catch (error) {
    await runner.releaseTime();
    throw error;
  }
  return { plan, model: runner.model, provider: runner.provider, trace: runner.trace, releaseTime: () => runner.releaseTime() };
}
