// The scenario's own log: every event in simulated time order, printed with a failure so a reader
// can follow what happened without replaying it; and the operator notices, as the log carried them.
export interface TraceLine {
  at: string;
  who: string;
  what: string;
}

export interface LoggedNotice {
  at: Date;
  replica: string;
  /** The notice's first line (its subject), or the outbox's held line. */
  subject: string;
  text: string;
}

export class Trace {
  readonly lines: TraceLine[] = [];
  readonly notices: LoggedNotice[] = [];

  constructor(private readonly now: () => Date) {}

  add(who: string, what: string): void {
    this.lines.push({ at: this.now().toISOString().slice(0, 16).replace('T', ' '), who, what });
  }

  notice(replica: string, subject: string, text: string): void {
    this.notices.push({ at: this.now(), replica, subject, text });
    this.add(replica, `NOTICE ${subject}`);
  }

  /** The last `limit` lines, one per line of text. */
  render(limit = 1500): string {
    const shown = this.lines.slice(-limit);
    const skipped = this.lines.length - shown.length;
    return [...(skipped > 0 ? [`… ${skipped} earlier lines`] : []), ...shown.map((l) => `${l.at}  ${l.who.padEnd(6)} ${l.what}`)].join('\n');
  }
}
