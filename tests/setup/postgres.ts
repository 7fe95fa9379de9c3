// Starts a throwaway PostgreSQL for the test run when the server binaries are on this machine:
// initdb into a temp directory, its own port, stopped and deleted at exit. Tests read its URL
// with inject('postgresUrl'); it is null (and those tests say they were skipped) when there is
// no PostgreSQL here. TEST_DATABASE_URL points the suite at an existing server instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
  }
}

function findPgBin(): string | null {
  const candidates = ['/usr/lib/postgresql'];
  for (const base of candidates) {
    if (!existsSync(base)) continue;
    const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const bin = join(base, version, 'bin');
      if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
    }
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const initdb = which.stdout.trim();
  return initdb ? join(initdb, '..') : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export default async function setup(project: TestProject) {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('postgresUrl', process.env.TEST_DATABASE_URL);
    return;
  }
  const bin = findPgBin();
  if (!bin) {
    console.warn('[postgres] No PostgreSQL server binaries found: tests against a real PostgreSQL are skipped.');
    project.provide('postgresUrl', null);
    return;
  }
  const isRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root; as root the cluster belongs to the postgres user.
  const asPostgres = (command: string, args: string[]) =>
    isRoot ? execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' }) : execFileSync(command, args, { stdio: 'pipe' });

  const dir = mkdtempSync(join(tmpdir(), 'launched-weekly-pg-'));
  chmodSync(dir, 0o777);
  const dataDir = join(dir, 'data');
  const port = await freePort();
  if (isRoot) execFileSync('chown', ['-R', 'postgres', dir]);
  asPostgres(join(bin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  asPostgres(join(bin, 'pg_ctl'), [
    '-D', dataDir, '-l', join(dir, 'server.log'), '-w', '-t', '60',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`,
    'start',
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  console.log(`[postgres] Throwaway PostgreSQL (${bin}) on port ${port}`);
  project.provide('postgresUrl', url);
  process.env.LW_TEST_PG_CTL = join(bin, 'pg_ctl');
  process.env.LW_TEST_PG_DATA = dataDir;

  return () => {
    try {
      asPostgres(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
