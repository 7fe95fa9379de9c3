// A PostgreSQL server of one's own, for tests, benchmarks and `npm run db:schema` that stop and start the database:
// the shared throwaway server (tests/setup/postgres.ts) serves every other test file and must
// stay up. Same recipe: initdb into a temp directory (as the postgres user when running as root,
// since PostgreSQL refuses root), its own loopback port, fsync off. Commands run asynchronously
// so a caller's load keeps flowing while the database goes down or comes back.
import { execFile, spawnSync } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, loopback only). */
  url: string;
  port: number;
  /** `pg_ctl stop -m fast`: open sessions are terminated, in-flight transactions roll back. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stops it (immediately) and deletes its files. */
  destroy(): Promise<void>;
}

/** The directory holding initdb and pg_ctl, or null when this machine has no PostgreSQL server. */
export function findPgBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const bin = join(base, version, 'bin');
      if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
    }
  }
  const initdb = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout?.trim();
  return initdb ? join(initdb, '..') : null;
}

export const hasPostgresServer = findPgBin() !== null;


export async function startOwnPostgres(options: { maxConnections?: number } = {}): Promise<OwnPostgres> {
  const bin = findPgBin();
  if (!bin) throw new Error('No PostgreSQL server binaries (initdb, pg_ctl) on this machine');
  const isRoot = process.getuid?.() === 0;
  const asPostgres = (command: string, args: string[]) =>
    isRoot ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);

  const dir = await mkdtemp(join(tmpdir(), 'launched-weekly-own-pg-'));
  await chmod(dir, 0o777);
  if (isRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    await chown(dir, Number(stdout.trim()), -1);
  }
  const dataDir = join(dir, 'data');
  const port = await freePort();
  await asPostgres(join(bin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);

  const pgCtl = (args: string[]) => asPostgres(join(bin, 'pg_ctl'), ['-D', dataDir, ...args]);
  const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=${options.maxConnections ?? 100}`;
  const start = async () => {
    await pgCtl(['-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', settings, 'start']);
  };
  const stop = async () => {
    await pgCtl(['-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  await start();

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    async restart() {
      await stop();
      await start();
    },
    async destroy() {
      await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
