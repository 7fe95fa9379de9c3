// The compiled processes (dist/bin/) carry the recaps as data checked when the build ran
// (scripts/build-node.ts, content/validated-recaps.ts): a start reads the weeks instead of running
// the schema over every one of them, and a build on an invalid recap fails with its message.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { makeScaledCopy } from '../../bench/support/scale-copy.ts';

const BIN = fileURLToPath(new URL('../../dist/bin', import.meta.url));

describe('the recaps in the compiled processes', () => {
  it('are the weeks content/index.ts gives, as one JSON document, with no schema check left to run', () => {
    const chunks = readdirSync(BIN)
      .filter((file) => file.endsWith('.js'))
      .map((file) => readFileSync(join(BIN, file), 'utf8'));
    // The string literal handed to JSON.parse, in whichever quotes esbuild printed it (the bundle's
    // whitespace is minified, so it need not end its line).
    const literal = /validatedRecaps ?= ?JSON\.parse\(("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)\)/s;
    const literals = chunks.map((text) => literal.exec(text)?.[1]).filter((found) => found !== undefined);
    expect(literals).toHaveLength(1);
    expect(JSON.parse(runInNewContext(literals[0]!) as string)).toEqual(recaps);
    for (const text of chunks) {
      expect(text).not.toContain('function validateRecaps');
      expect(text).not.toContain('// content/recaps/');
    }
  });

  it('fail the build when a recap is invalid, naming the file and the field', async () => {
    // A copy of the project with the real weeks only.
    const copy = await makeScaledCopy(recaps.length);
    try {
      const file = join(copy.root, 'content/recaps/2025-07-14.ts');
      await writeFile(file, (await readFile(file, 'utf8')).replace("date: '2025-07-14'", "date: '2025-07-15'"));
      const failed = await copy.node(['scripts/build-node.ts']).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain('content/recaps/2025-07-14.ts: path: path must be "/weekly-recap-july-15" for date 2025-07-15');
      // esbuild's own report of the plugin's error, not a stack trace of the build script.
      expect(failed?.stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(join(copy.root, 'dist/bin/server.js'))).toBe(false);
    } finally {
      await copy.remove();
    }
  }, 60_000);
});
