// A DATA_DIR so deep that the embedded database's lock socket (DATA_DIR/db.lock.sock) is longer
// than a Unix socket path may be: the server stops at start with one line naming DATA_DIR and
// the limit, not a bare EINVAL from listen(). A path of exactly the limit still takes the lock.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_SOCKET_PATH_MAX_BYTES, lockSocketPath, takeOwnerLock } from '../../server/store/owner-lock.ts';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'lw-lock-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A directory under `base` whose lock socket path is exactly `bytes` long. */
async function dirWithSocketPathOf(bytes: number): Promise<string> {
  // One byte for the separator before the padding.
  const pad = bytes - Buffer.byteLength(lockSocketPath(base)) - 1;
  const dir = join(base, 'd'.repeat(pad));
  await mkdir(dir, { recursive: true });
  expect(Buffer.byteLength(lockSocketPath(dir))).toBe(bytes);
  return dir;
}

describe('a DATA_DIR too long for the lock socket', () => {
  it('stops the server at start with one line naming DATA_DIR and the limit, no EINVAL and no stack trace', async () => {
    const dir = await dirWithSocketPathOf(LOCK_SOCKET_PATH_MAX_BYTES + 1);
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
      cwd: new URL('../..', import.meta.url),
      env: { PATH: process.env.PATH, NODE_ENV: 'test', DATA_DIR: dir, DIGEST_CRON: 'off', PORT: '0', HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status).toBe(1);
    expect(output).toContain(`  - DATA_DIR: the embedded database's lock ${dir}/db.lock.sock would be 108 bytes long, and a Unix socket path may have at most 107`);
    expect(output).not.toMatch(/EINVAL|^\s+at /m);
  }, 40_000);

  it('refuses the lock itself with the same words, and takes it at exactly the limit', async () => {
    const over = await dirWithSocketPathOf(LOCK_SOCKET_PATH_MAX_BYTES + 1);
    await expect(takeOwnerLock(over, join(over, 'db'))).rejects.toThrow(/^DATA_DIR: the embedded database's lock .* may have at most 107/);
    const at = await dirWithSocketPathOf(LOCK_SOCKET_PATH_MAX_BYTES);
    const release = await takeOwnerLock(at, join(at, 'db'));
    await release();
  });
});
