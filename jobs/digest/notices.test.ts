// Which scheduled runs the operator hears about: one notice per run, one per stop (not per failed
// try), one when a resumed run completes, and none for another replica's lease in the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { noticeFor, type NoticeContext } from './notices.ts';
import type { DigestReport } from '../../server/mail/digest/run-report.ts';

let store: Store;
beforeAll(async () => {
  store = await openPGliteStore(null);
});
afterAll(() => store.close());

const report = (outcome: DigestReport['outcome'], message: string, sent = 0): DigestReport => ({
  outcome,
  message,
  recap: { date: '2025-07-14', path: '/weekly-recap-july-14', headline: 'h', ageDays: 0 },
  sent,
  skippedAlreadySent: 0,
  skippedUnsubscribed: 0,
  failed: [],
  unknown: [],
  durationMs: 1,
});
const at = new Date('2025-07-14T09:01:00Z');
const context = (overrides: Partial<NoticeContext>): NoticeContext => ({ attempt: 0, nextTry: null, nextRun: new Date('2025-07-21T09:00:00Z'), stopNoticed: false, ...overrides });

describe('operator notices', () => {
  it('after a scheduled run: what it did and the next run, subject starting [Launched Weekly]', async () => {
    const notice = await noticeFor(store, report('sent', 'Sent Week of July 14, 2025 to 3 subscribers.', 3), context({}));
    expect(notice?.subject).toBe('[Launched Weekly] Weekly digest: sent, 3 messages sent');
    expect(notice?.text).toContain('This run: 3 sent · 0 failed · 0 unknown batches · 0 already had it · 0 left before their batch');
    expect(notice?.text).toContain('Next scheduled run: 2025-07-21 09:00 UTC.');
  });

  it('a stop once, with why and when it is tried again; nothing for later failed tries', async () => {
    const stopped = report('stopped', 'Stopped after sending … to 0 subscribers: the provider kept failing: …');
    const first = await noticeFor(store, stopped, context({ nextTry: at }));
    expect(first?.subject).toBe('[Launched Weekly] Stopped: the 2025-07-14 recap, retrying at 2025-07-14 09:01 UTC');
    expect(first?.text).toContain('Why: Stopped after sending … to 0 subscribers: the provider kept failing');
    expect(await noticeFor(store, stopped, context({ attempt: 1, nextTry: at, stopNoticed: true }))).toBeNull();
    const done = await noticeFor(store, report('sent', 'Resumed (try 2): Sent … to 3 subscribers.', 3), context({ attempt: 2, stopNoticed: true }));
    expect(done?.subject).toBe('[Launched Weekly] Resumed and finished: the 2025-07-14 recap, sent');
  });

  it('a later try that leaves a batch unknown is told, though the stop was; a batch found unknown is not told again', async () => {
    const batch = { id: '7', recapDate: '2025-07-14', sequence: 2, recipients: 3, reason: 'it was written 24.2 h ago and never confirmed', settle: { send: 'send', skip: 'skip' } };
    const madeUnknown = { ...report('stopped', 'Resumed (try 13): Stopped … 1 batch could not be settled safely and is unknown …'), unknown: [{ ...batch, madeThisRun: true }] };
    const told = await noticeFor(store, madeUnknown, context({ attempt: 13, nextTry: at, stopNoticed: true }));
    expect(told?.subject).toBe('[Launched Weekly] Stopped: the 2025-07-14 recap, 1 batch unknown, retrying at 2025-07-14 09:01 UTC');
    const foundUnknown = { ...madeUnknown, unknown: [batch] };
    expect(await noticeFor(store, foundUnknown, context({ attempt: 14, nextTry: at, stopNoticed: true }))).toBeNull();
  });

  it('nothing for another replica’s lease in the way, nor for finding afterwards that it sent the recap', async () => {
    expect(await noticeFor(store, report('locked', 'Nothing sent: another run is sending …'), context({ nextTry: at }))).toBeNull();
    expect(await noticeFor(store, report('already-sent', 'Resumed (try 1): Nothing to send: …'), context({ attempt: 1 }))).toBeNull();
    // A late week's run is told even then: the server that sent it may have died before telling it.
    expect((await noticeFor(store, report('already-sent', 'Resumed (try 1): Nothing to send: …'), context({ attempt: 1, late: true })))?.subject).toBe(
      '[Launched Weekly] Resumed and finished (late): the 2025-07-14 recap, already-sent',
    );
    // A run resumed after a crash (no stop was told) that sends: its completion is told.
    expect((await noticeFor(store, report('sent', 'Resumed (try 1): Sent …', 50), context({ attempt: 1 })))?.subject).toMatch(/^\[Launched Weekly\] Resumed and finished/);
  });
});
