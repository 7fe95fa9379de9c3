// The real server as a child process (`node --import tsx bin/server.ts`, or the compiled one), for tests that stop it
// the way a deploy or a crash does (SIGTERM, SIGKILL) and start it again on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakeResend, type FakeResend } from './fake-resend.ts';
import { createTestDatabase, postgresUrl } from './postgres.ts';
import { addSignup } from './store-ops.ts';

const ROOT = new URL('../..', import.meta.url);

export interface ServerProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once its output matches; rejects on timeout or exit. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends the signal and resolves with the exit code once it has exited. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<number | null>;
}

/** bin/server.ts from source, through tsx. */
const SOURCE_SERVER = ['--import', 'tsx', 'bin/server.ts'];

/**
 * Starts bin/server.ts of this checkout, or of the copy at `root`, and resolves once it has printed
 * its ready line: it listens and its store is open. (Polling a URL instead would leave a pooled
 * keep-alive connection that the server may close just as the first test reuses it.) `nodeArgs`
 * runs another command instead, e.g. the compiled dist/bin/server.js with npm start's flags.
 */
export async function startServerProcess(
  env: Record<string, string>,
  readyTimeoutMs = 120_000,
  root: string | URL = ROOT,
  nodeArgs: readonly string[] = SOURCE_SERVER,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: root,
    env: { PATH: process.env.PATH, NODE_ENV: 'test', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        child.stderr!.off('data', check);
      };
      const check = () => {
        if (pattern.test(output)) {
          done();
          resolve();
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${pattern}; output so far:\n${output}`));
      }, timeoutMs);
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      void exited.then(() => {
        if (!pattern.test(output)) {
          done();
          reject(new Error(`server exited before ${pattern}:\n${output}`));
        }
      });
      check();
    });

  const started: ServerProcess = {
    child,
    output: () => output,
    waitFor,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  // Generous: tsx and the embedded database start slowly on a busy two-core machine.
  await waitFor(/Launched Weekly on http:/, readyTimeoutMs);
  return started;
}

export interface ServerData {
  /** DATA_DIR, and DATABASE_URL on PostgreSQL: what a server process needs to use this data. */
  env: Record<string, string>;
  /** The test's own connection to the same data, for seeding and reading (PGlite: only while no server runs). */
  store(): Promise<Store>;
  drop(): Promise<void>;
}

/** The stores a server process can run on, each opening a fresh data directory (and database). */
export const serverDataKinds = [
  {
    name: 'PGlite',
    available: true,
    async open(prefix: string): Promise<ServerData> {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      return { env: { DATA_DIR: dir }, store: () => openPGliteStore(dir), drop: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async open(prefix: string): Promise<ServerData> {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      const db = await createTestDatabase();
      return {
        env: { DATA_DIR: dir, DATABASE_URL: db.url },
        store: () => openPostgresStore(db.url, { max: 2 }),
        drop: async () => {
          await db.drop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

/** Server data with readers on the list and the Resend stand-in a server process sends through. */
export interface ReadersDataAndProvider {
  fake: FakeResend;
  data: ServerData;
}

/** The Resend stand-in and fresh `kind` data with `readers` subscribed, its store closed again for a server process, open around the calling describe's tests. */
export function useReadersDataAndProvider(kind: (typeof serverDataKinds)[number], prefix: string, readers: readonly string[]): ReadersDataAndProvider {
  const pieces = {} as ReadersDataAndProvider;
  beforeAll(async () => {
    pieces.fake = await startFakeResend();
    pieces.data = await kind.open(prefix);
    const store = await pieces.data.store();
    for (const email of readers) await addSignup(store, email, '/');
    await store.close();
  }, 120_000);
  afterAll(async () => {
    await pieces.fake?.close();
    await pieces.data?.drop();
  });
  return pieces;
}
