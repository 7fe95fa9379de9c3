// The sending lease: one sender per recap across processes and replicas. Renewed in the
// background too, so a long rate-limit wait inside one batch keeps it. Release waits for a renewal
// already on its way to the database first: otherwise that renewal could land after the delete and
// re-create the lease for a whole period, and the next run would wrongly report "locked".
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { systemClock, type Clock, type TimerHandle } from '../../clock.ts';
import type { DigestStore } from '../../store/types.ts';

export const DEFAULT_LEASE_MS = 60_000;

export class SendingLease {
  private readonly holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private lastRenewal = 0;
  private lost = false;
  private released = false;
  private renewing: Promise<void> | null = null;
  private timer: TimerHandle | null = null;

  constructor(
    private readonly store: DigestStore,
    private readonly recapDate: string,
    readonly leaseMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  private now = () => this.clock.now().getTime();

  /** The database's clock for the system clock; the caller's for any other (a test's manual one). */
  private take() {
    return this.store.acquireDigestLock(this.recapDate, this.holder, this.leaseMs, this.clock === systemClock ? undefined : this.clock.now());
  }

  private scheduleRenewal() {
    this.timer = this.clock.setTimer(async () => {
      await this.renew().catch(() => {});
      if (!this.released) this.scheduleRenewal();
    }, Math.max(1_000, Math.floor(this.leaseMs / 3)));
  }

  /** Takes the lease; false while another holder's is valid. */
  async acquire(): Promise<boolean> {
    if (!(await this.take())) return false;
    this.lastRenewal = this.now();
    this.scheduleRenewal();
    return true;
  }

  /** One renewal at a time; none after release. */
  renew(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.renewing ??= (async () => {
      try {
        if (await this.take()) this.lastRenewal = this.now();
        else this.lost = true;
      } finally {
        this.renewing = null;
      }
    })();
    return this.renewing;
  }

  /** Null while the lease is surely still ours; otherwise why sending must stop. */
  async check(): Promise<string | null> {
    if (this.now() - this.lastRenewal > this.leaseMs / 3) await this.renew().catch(() => {});
    if (this.lost || this.now() - this.lastRenewal > this.leaseMs / 2) return 'lost the sending lease (the database did not confirm it in time)';
    return null;
  }

  async release(): Promise<void> {
    this.released = true;
    this.timer?.cancel();
    await this.renewing?.catch(() => {});
    await this.store.releaseDigestLock(this.recapDate, this.holder).catch(() => {});
  }
}
