// The embedded database's single owner, kept by a lock the operating system releases when its
// process dies. The owner listens on a Unix socket in DATA_DIR (db.lock.sock): while it lives, a
// connection to it succeeds; once it is gone (exited, SIGKILLed, a zombie not yet reaped, whose
// descriptors the kernel has already closed) a connection is refused, and the next process takes
// the directory at once. No process id is trusted, so a restart under the same pid (a container's
// server is pid 1 every time) or a pid reused by another program changes nothing.
//
// Why not a library: PGlite (0.5) has no lock of its own, and the npm libraries that give an
// advisory flock/fcntl lock (fs-ext, os-lock) are C addons built by node-gyp at install time with
// no prebuilt binaries, so `npm install` would need a compiler on every machine and in the slim
// Docker image. A listening socket is released by the kernel just the same, with Node's own net.
import { connect, createServer, type Server } from 'node:net';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { StoreLockedError } from './types.ts';

interface LockOwner {
  pid: number;
  host: string;
  command: string;
  since: string;
}

/** Whether a live process listens on the socket: its answer to a connection, within a second. */
function ownerAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (alive: boolean) => {
      socket.destroy();
      resolve(alive);
    };
    socket.setTimeout(1_000, () => done(true));
    socket.once('connect', () => done(true));
    // ECONNREFUSED: the socket file of a dead owner; ENOENT: it was removed meanwhile.
    socket.once('error', () => done(false));
  });
}

function listen(socketPath: string): Promise<Server | 'in-use'> {
  return new Promise((resolve, reject) => {
    // A connection is only ever a liveness question: answered by being accepted, then closed.
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve('in-use') : reject(error)));
    server.listen(socketPath, () => {
      // The lock must not keep a finished process alive.
      server.unref();
      resolve(server);
    });
  });
}

async function refusal(infoPath: string, socketPath: string, dbPath: string): Promise<StoreLockedError> {
  const owner = (await readFile(infoPath, 'utf8').then((text) => JSON.parse(text) as LockOwner).catch(() => null)) ?? { pid: 0, host: hostname(), command: '', since: 'unknown' };
  return new StoreLockedError(
    `The embedded database ${dbPath} is in use by process ${owner.pid} on ${owner.host} ` +
      `(${owner.command || 'unknown command'}, since ${owner.since}). ` +
      'Only one process may open it: stop that process first, or let it do the work ' +
      '(the server runs the Monday digest itself unless DIGEST_CRON=off). ' +
      `The lock (${socketPath}) ends with its process; nothing needs deleting. To share data between processes, set DATABASE_URL.`,
  );
}

/**
 * Removes the socket of a dead owner. Two processes starting at once may both find it dead: only
 * the one that creates the guard file removes it, so neither removes the socket the other has just
 * bound; the other waits a moment and looks again. A guard left by a process killed in between is
 * old after a few seconds and removed.
 */
async function removeDeadSocket(socketPath: string): Promise<void> {
  const guard = `${socketPath}.removing`;
  try {
    await writeFile(guard, String(process.pid), { flag: 'wx' });
  } catch {
    const age = Date.now() - ((await stat(guard).catch(() => null))?.mtimeMs ?? Date.now());
    if (age > 5_000) await rm(guard, { force: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    return;
  }
  try {
    if (!(await ownerAnswers(socketPath))) await rm(socketPath, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

/** A Unix socket's path is at most 107 bytes on Linux (108 with its closing NUL); macOS allows 103. */
export const LOCK_SOCKET_PATH_MAX_BYTES = 107;

export const lockSocketPath = (dataDir: string) => `${dataDir}/db.lock.sock`;

/**
 * Why DATA_DIR cannot hold the lock, or null: a socket path over the limit makes listen() fail
 * with a bare EINVAL, which names neither the setting nor the cause.
 */
export function lockPathProblem(dataDir: string): string | null {
  const socketPath = lockSocketPath(dataDir);
  const bytes = Buffer.byteLength(socketPath);
  if (bytes <= LOCK_SOCKET_PATH_MAX_BYTES) return null;
  return (
    `the embedded database's lock ${socketPath} would be ${bytes} bytes long, and a Unix socket path may have at most ` +
    `${LOCK_SOCKET_PATH_MAX_BYTES}: choose a directory at most ${LOCK_SOCKET_PATH_MAX_BYTES - Buffer.byteLength('/db.lock.sock')} bytes long, e.g. ./data or /var/lib/launched-weekly`
  );
}

/** DATA_DIR cannot hold the embedded database's lock (its path is too long). */
export class LockPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockPathError';
  }
}

/**
 * Takes the directory for this process, or throws StoreLockedError naming its live owner. Resolves
 * with the release, which a clean close calls; a process that dies releases it by dying.
 */
export async function takeOwnerLock(dataDir: string, dbPath: string): Promise<() => Promise<void>> {
  const tooLong = lockPathProblem(dataDir);
  if (tooLong) throw new LockPathError(`DATA_DIR: ${tooLong}`);
  const socketPath = lockSocketPath(dataDir);
  const infoPath = `${dataDir}/db.lock`;
  for (let attempt = 0; attempt < 20; attempt++) {
    const server = await listen(socketPath);
    if (server !== 'in-use') {
      const me: LockOwner = { pid: process.pid, host: hostname(), command: process.argv.slice(1).join(' '), since: new Date().toISOString() };
      // Who holds it, for the message a second process prints; the socket is the lock itself.
      await writeFile(infoPath, JSON.stringify(me));
      return async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await rm(socketPath, { force: true });
      };
    }
    if (await ownerAnswers(socketPath)) throw await refusal(infoPath, socketPath, dbPath);
    await removeDeadSocket(socketPath);
  }
  throw new StoreLockedError(`Could not take the lock ${socketPath}; another process keeps taking it.`);
}
