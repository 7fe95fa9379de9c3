import { describe, expect, it } from 'vitest';
import { closingReport, historyTable, RunTally, settleCommands } from './run-report.ts';

describe('closingReport', () => {
  it('names unknown batches with the commands that settle them, and makes the outcome unknown', () => {
    const tally = new RunTally();
    tally.sent = 150;
    tally.unknown.push({ id: '17', recapDate: '2025-07-14', sequence: 1, recipients: 100, reason: 'too old', settle: settleCommands('17') });
    const report = closingReport(tally, 'Week of July 14', null);
    expect(report.outcome).toBe('unknown');
    expect(report.message).toContain('Sent Week of July 14 to 150 subscribers.');
    expect(report.message).toContain('batch 17 (100 recipients: too old)');
    expect(report.message).toContain('`npm run digest -- --settle 17 send`');
    expect(report.message).toContain('`npm run digest -- --settle 17 skip`');
  });

  it('tells already-sent from no subscribers, and says why a run stopped', () => {
    const none = new RunTally();
    expect(closingReport(none, 'W', null).outcome).toBe('no-subscribers');
    none.skippedAlreadySent = 3;
    expect(closingReport(none, 'W', null)).toMatchObject({ outcome: 'already-sent', message: expect.stringContaining('(3)') });
    expect(closingReport(none, 'W', 'stopped on request')).toMatchObject({ outcome: 'stopped', message: expect.stringContaining('stopped on request') });
  });
});

describe('historyTable', () => {
  it('lists runs newest first with their counts, and a killed run as interrupted', () => {
    const table = historyTable([
      { id: '2', kind: 'manual', startedAt: new Date('2025-07-14T09:05:00Z'), outcome: null, sent: 0, failed: 0, skippedAlreadySent: 0, skippedLeft: 0, unknownBatches: 0 },
      { id: '1', kind: 'scheduled', startedAt: new Date('2025-07-14T09:00:00Z'), outcome: 'sent', recapDate: '2025-07-14', sent: 950, failed: 1, skippedAlreadySent: 0, skippedLeft: 2, unknownBatches: 0, message: 'Sent it.', finishedAt: new Date('2025-07-14T09:01:00Z') },
    ]);
    const [header, killed, done] = table.split('\n');
    expect(header).toMatch(/^run\s+started \(UTC\)\s+kind\s+recap\s+outcome\s+sent\s+failed\s+had it\s+left\s+unkn\.\s+message$/);
    expect(killed).toMatch(/^2\s+2025-07-14 09:05\s+manual\s+—\s+interrupted\s+0\s+0\s+0\s+0\s+0\s+no outcome recorded/);
    expect(done).toMatch(/^1\s+2025-07-14 09:00\s+scheduled\s+2025-07-14\s+sent\s+950\s+1\s+0\s+2\s+0\s+Sent it\.$/);
    expect(historyTable([])).toBe('No digest runs yet.');
  });
});
