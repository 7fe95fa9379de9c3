// A recap whose e-mail would be clipped by Gmail, built in a copy of the project, is refused by
// `npm run digest` (and by `npm run validate-content`) before anything is sent: the outbox stays
// empty and the message names the recap, the check and the fix.
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DigestReport } from '../../server/mail/digest/run.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { npmRun } from '../support/cli.ts';
import { addSignup } from '../support/store-ops.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SKIP = new Set(['node_modules', '.git', 'dist', 'data', 'tests', '.tmp', 'bench']);

// The July 14 recap again a week later, every editor's note grown to about 12 KB: ten of them put
// one copy's HTML well over 102 KB.
const OVERSIZED_WEEK = `import { defineRecap } from '../define.ts';
import base from './2025-07-14.ts';

export default defineRecap({
  ...base,
  date: '2025-07-21',
  path: '/weekly-recap-july-21',
  entries: base.entries.map((entry) => ({ ...entry, note: 'A long and thorough note about this launch. '.repeat(280) })),
});
`;

let workdir: string;
let dataDir: string;

const run = (script: string, args: string[] = []) =>
  npmRun(script, args, { DATA_DIR: dataDir, SITE_URL: 'https://launchedweekly.test', UNSUBSCRIBE_SECRET: 'presend-test-secret-0123456789abcdef01234567', DIGEST_TZ: 'UTC', LOG_LEVEL: 'silent' }, workdir);

beforeAll(async () => {
  workdir = mkdtempSync(join(tmpdir(), 'lw-presend-project-'));
  dataDir = mkdtempSync(join(tmpdir(), 'lw-presend-data-'));
  cpSync(ROOT, workdir, { recursive: true, filter: (source) => !SKIP.has(source.slice(ROOT.length).split('/')[0] ?? '') });
  symlinkSync(join(ROOT, 'node_modules'), join(workdir, 'node_modules'), 'dir');
  writeFileSync(join(workdir, 'content/recaps/2025-07-21.ts'), OVERSIZED_WEEK);

  const store = await openPGliteStore(dataDir);
  for (const email of ['ada@readers.test', 'grace@readers.test', 'linus@readers.test']) await addSignup(store, email, '/');
  await store.close();
});

afterAll(() => {
  rmSync(workdir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a recap whose e-mail exceeds the clipping size', () => {
  it('fails npm run validate-content with the check and how to fix it', async () => {
    // Also writes the registry, so the copy's content/ now includes the oversized week.
    const result = await run('validate-content');
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toMatch(/content\/recaps\/2025-07-21\.ts: error: HTML under Gmail’s clipping size: The HTML of one copy is 1\d\d\.\d KB/);
    expect(result.stderr).toContain('Fix: Shorten the recap');
  }, 120_000);

  it('is refused by npm run digest before anything is sent, manual run and --to alike', async () => {
    for (const args of [['--recap', '2025-07-21'], ['--recap', '2025-07-21', '--to', 'operator@readers.test']]) {
      const result = await run('digest', [...args, '--json']);
      expect(result.code, result.stderr).toBe(1);
      const report = JSON.parse(result.stdout) as DigestReport;
      expect(report.outcome).toBe('stopped');
      expect(report.sent).toBe(0);
      expect(report.message).toMatch(/^Nothing sent: Week of July 21, 2025 failed the pre-send check\. HTML under Gmail’s clipping size: .* Fix: Shorten the recap's intro, taglines or notes in content\/recaps\/2025-07-21\.ts/);
    }
    // The outbox mailer creates its folder on the first message: none was written.
    const outbox = join(dataDir, 'outbox');
    expect(existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : []).toEqual([]);
  }, 120_000);

  it('does not stop the recap before it, which still goes out', async () => {
    const result = await run('digest', ['--recap', '2025-07-14', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: 'sent', sent: 3 });
    expect(readdirSync(join(dataDir, 'outbox')).filter((name) => name.endsWith('.eml'))).toHaveLength(3);
  }, 120_000);
});
