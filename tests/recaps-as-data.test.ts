// The compiled processes (dist/bin/) carry the recaps as data checked when the build ran
// (scripts/build-node.ts, content/validated-recaps.ts): a start reads the weeks instead of running
// the schema over every one of them, and a build on an invalid recap fails with its message.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { recaps } from '../content/index.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist/bin');
const SKIP = new Set(['node_modules', '.git', 'dist', 'data', 'tests', '.tmp', 'bench', 'coverage']);

describe('the recaps in the compiled processes', () => {
  it('are the weeks content/index.ts gives, as one JSON document, with no schema check left to run', () => {
    const chunks = readdirSync(BIN)
      .filter((file) => file.endsWith('.js'))
      .map((file) => readFileSync(join(BIN, file), 'utf8'));
    // The string literal handed to JSON.parse, in whichever quotes esbuild printed it.
    const literals = chunks.map((text) => /validatedRecaps = JSON\.parse\((.+)\);$/m.exec(text)?.[1]).filter((found) => found !== undefined);
    expect(literals).toHaveLength(1);
    expect(JSON.parse(runInNewContext(literals[0]!) as string)).toEqual(recaps);
    for (const text of chunks) {
      expect(text).not.toContain('function validateRecaps');
      expect(text).not.toContain('// content/recaps/');
    }
  });

  it('fail the build when a recap is invalid, naming the file and the field', () => {
    const copy = mkdtempSync(join(tmpdir(), 'lw-invalid-recap-'));
    try {
      cpSync(ROOT, copy, { recursive: true, filter: (source) => !SKIP.has(source.slice(ROOT.length).split('/')[0] ?? '') });
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
      const file = join(copy, 'content/recaps/2025-07-14.ts');
      writeFileSync(file, readFileSync(file, 'utf8').replace("date: '2025-07-14'", "date: '2025-07-15'"));
      const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-node.ts'], { cwd: copy, encoding: 'utf8' });
      expect(build.status).not.toBe(0);
      expect(build.stderr).toContain('content/recaps/2025-07-14.ts: path: path must be "/weekly-recap-july-15" for date 2025-07-15');
      // esbuild's own report of the plugin's error, not a stack trace of the build script.
      expect(build.stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(join(copy, 'dist/bin/server.js'))).toBe(false);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
