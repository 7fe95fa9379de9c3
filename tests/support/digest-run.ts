// Monday's digest run against a test server's store, as the scheduled job runs it, into an outbox
// of its own, so a test can see who got a copy.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest, type DigestReport } from '../../server/mail/digest/run.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { readOutbox } from './outbox.ts';
import { TEST_UNSUBSCRIBE_SECRET, type TestServer } from './server.ts';

/**
 * A digest run on Tuesday 15 July 2025 into the outbox `dir`: the week's own as Monday's job runs
 * it, or `recapWeek`'s as the operator asks for it by hand.
 */
export function runDigestInto(server: TestServer, dir: string, recapWeek?: string): Promise<DigestReport> {
  return runWeeklyDigest({
    store: server.store,
    mailer: new OutboxMailer({ dir, from: 'Launched Weekly <digest@launchedweekly.test>' }),
    recaps,
    now: new Date('2025-07-15T09:00:00Z'),
    siteUrl: server.url,
    unsubscribeSecret: TEST_UNSUBSCRIBE_SECRET,
    mode: recapWeek ? 'manual' : 'scheduled',
    recapWeek,
    freshnessDays: 7,
  });
}

/** The digest of the week of 14 July 2025, run on the Tuesday after as Monday's job would: its report and the addresses sent a copy, sorted. */
export async function runDigest(server: TestServer): Promise<{ report: DigestReport; recipients: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'lw-digest-recipients-'));
  try {
    const report = await runDigestInto(server, dir);
    return { report, recipients: (await readOutbox(dir)).map((eml) => eml.to).sort() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The addresses that digest sent a copy to, sorted. */
export async function digestRecipients(server: TestServer): Promise<string[]> {
  return (await runDigest(server)).recipients;
}
