// Graceful shutdown of the real server process under load: SIGTERM in the middle of several
// hundred concurrent page reads and signups. Every request that got an answer got a whole one,
// new connections are refused once the signal arrived, the process exits 0 in time, and every
// signup answered 201 is in the database afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { freePort } from '../../scripts/free-port.ts';

const ROOT = new URL('../..', import.meta.url);
const TOTAL_REQUESTS = 900;
const CONCURRENCY = 150;
const SIGNAL_AFTER_RESPONSES = 200;
// The server's own hard limit (SHUTDOWN_GRACE_MS in bin/start-server.ts); a wall-clock bound tighter
// than that fails on a loaded machine. That the drain is not stuck on keep-alive connections is
// checked without a clock: the test holds one open that never closes by itself, and the drain must
// finish without the forced path.
const EXIT_BOUND_MS = 10_000;

/**
 * A keep-alive connection that has had one answer and then sits idle; `closed` settles when it is
 * closed (wrapped, so awaiting this function waits for the answer, not for the close).
 */
async function idleKeepAlive(port: number): Promise<{ closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  const answered = new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await answered;
  return { closed };
}


function waitForOutput(child: ChildProcess, output: () => string, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output so far:\n${output()}`)), timeoutMs);
    const check = () => {
      if (pattern.test(output())) {
        clearTimeout(timer);
        child.stderr?.off('data', check);
        child.stdout?.off('data', check);
        resolve();
      }
    };
    child.stderr?.on('data', check);
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!pattern.test(output())) reject(new Error(`server exited (${code}) before ${pattern}:\n${output()}`));
    });
    check();
  });
}

/** What a new connection gets: an HTTP status line, or the socket error that ended it. */
function newConnection(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.once('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.once('close', () => resolve(received ? received.split('\r\n')[0]! : 'closed without an answer'));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(error.code ?? error.message);
    });
  });
}

type Outcome =
  | { kind: 'answered'; index: number; status: number; complete: boolean; after: boolean; email?: string }
  | { kind: 'no-answer'; index: number; after: boolean; reason: string };

/** The server process under test, with everything it has printed so far. */
interface RunningServer {
  dataDir: string;
  child: ChildProcess;
  output: string;
  port: number;
}

/** Starts `bin/server.ts` on a free port over a new data directory, collecting what it prints. */
async function spawnServer(): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-shutdown-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DIGEST_CRON: 'off',
      HOST: '127.0.0.1',
      PORT: String(port),
      RATE_LIMIT_PER_MINUTE: '100000',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const server: RunningServer = { dataDir, child, output: '', port };
  child.stdout!.on('data', (chunk: Buffer) => (server.output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (server.output += chunk.toString()));
  return server;
}

/** What happened around the signal: every request's outcome, the new connections tried after it, and the exit. */
interface LoadRun {
  outcomes: Outcome[];
  signalledAt: number;
  afterSignal: string[];
  exit: { code: number | null; at: number };
  /** What `idleKeepAlive` gave back, awaited by the test after its exit checks. */
  idleClosed: Promise<void>;
}

/**
 * Sends page reads and signups from many workers at once, sends SIGTERM once enough have been
 * answered, tries new connections after it, and waits for the load to end and the process to exit.
 */
async function loadThenSigterm(server: RunningServer): Promise<LoadRun> {
  const { child, port } = server;
  const base = `http://127.0.0.1:${port}`;
  const pages = ['/', '/archive', '/about', ...recaps.map((recap) => recap.path)];
  const outcomes: Outcome[] = [];
  let answered = 0;
  let signalledAt = 0;
  let next = 0;
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() })));

  const signalled = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      // Past the last request the signal still goes, so a failed load cannot hang the test.
      if (answered >= SIGNAL_AFTER_RESPONSES || next >= TOTAL_REQUESTS) {
        clearInterval(check);
        signalledAt = Date.now();
        child.kill('SIGTERM');
        resolve();
      }
    }, 5);
  });

  async function one(index: number): Promise<Outcome> {
    const signup = index % 3 === 2;
    const email = signup ? `load-${index}@example.com` : undefined;
    const after = () => signalledAt > 0;
    let response: Response;
    try {
      response = signup
        ? await fetch(`${base}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) })
        : await fetch(`${base}${pages[index % pages.length]}`);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { kind: 'no-answer', index, after: after(), reason: cause?.code ?? cause?.message ?? String(error) };
    }
    let complete: boolean;
    try {
      const body = await response.text();
      complete = signup ? JSON.parse(body).status === 'subscribed' : body.trimEnd().endsWith('</html>') && body.includes('id="email-signup"');
    } catch {
      complete = false;
    }
    answered += 1;
    return { kind: 'answered', index, status: response.status, complete, after: after(), email };
  }

  async function worker() {
    while (next < TOTAL_REQUESTS) {
      const index = next++;
      outcomes.push(await one(index));
    }
  }

  const { closed: idleClosed } = await idleKeepAlive(port);
  const load = Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await signalled;
  await waitForOutput(child, () => server.output, /SIGTERM received/, 5_000);
  const afterSignal: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    afterSignal.push(await newConnection(port));
    await delay(50);
  }
  await load;
  const exit = await exited;
  return { outcomes, signalledAt, afterSignal, exit, idleClosed };
}

describe('SIGTERM under load', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await spawnServer();
    // Generous: tsx and the embedded database start slowly on a busy two-core machine.
    await waitForOutput(server.child, () => server.output, /Launched Weekly on http:/, 90_000);
  });

  afterAll(async () => {
    if (!server) return;
    const { child, dataDir } = server;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finishes what it answers, refuses new connections, exits 0 and keeps every accepted signup', async () => {
    const { outcomes, signalledAt, afterSignal, exit, idleClosed } = await loadThenSigterm(server);
    const { output, dataDir } = server;

    const replies = outcomes.filter((o): o is Extract<Outcome, { kind: 'answered' }> => o.kind === 'answered');
    const unanswered = outcomes.filter((o): o is Extract<Outcome, { kind: 'no-answer' }> => o.kind === 'no-answer');
    const summary = `${replies.length} answered (${replies.filter((r) => r.after).length} after SIGTERM), ${unanswered.length} without answer`;

    // Refused outright; a connection the kernel had queued before the socket closed is reset.
    for (const result of afterSignal) expect(['ECONNREFUSED', 'ECONNRESET'], summary).toContain(result);
    expect(exit.code, output).toBe(0);
    expect(exit.at - signalledAt).toBeLessThan(EXIT_BOUND_MS);
    expect(output).toMatch(/Stopped cleanly/);
    // Drained, not forced: the idle keep-alive connection was closed by the server.
    expect(output).not.toMatch(/still running after/);
    await idleClosed;

    // Mid-load: plenty answered before the signal, requests were in flight when it came.
    expect(replies.length).toBeGreaterThanOrEqual(SIGNAL_AFTER_RESPONSES);
    expect(replies.filter((r) => r.after).length, summary).toBeGreaterThan(0);
    // Whatever was answered was answered whole and successfully: no 5xx, no cut-off body.
    for (const reply of replies) {
      expect(reply.status, `request ${reply.index}`).toBe(reply.email ? 201 : 200);
      expect(reply.complete, `request ${reply.index} body`).toBe(true);
    }
    // Before the signal nothing may fail, except the keep-alive race every HTTP client knows (it
    // reuses a connection just as the server's 5 s idle timeout closes it), which a starved
    // two-core machine can hit once or twice: a reset, never an HTTP error.
    const beforeSignal = unanswered.filter((o) => !o.after);
    expect(beforeSignal.length, JSON.stringify(beforeSignal)).toBeLessThanOrEqual(TOTAL_REQUESTS / 100);
    for (const failure of beforeSignal) expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(failure.reason);

    const store = await openPGliteStore(dataDir);
    try {
      const accepted = replies.filter((r) => r.email && r.status === 201).map((r) => r.email!);
      expect(accepted.length).toBeGreaterThan(50);
      const missing: string[] = [];
      for (const email of accepted) if (!(await store.findSubscriberByEmail(email))?.active) missing.push(email);
      expect(missing).toEqual([]);
      expect((await store.countSubscribers()).active).toBeGreaterThanOrEqual(accepted.length);
    } finally {
      await store.close();
    }
    console.log(`[shutdown] ${summary}; exited ${exit.code} ${exit.at - signalledAt} ms after SIGTERM; ${replies.filter((r) => r.email).length} signups stored`);
  }, 60_000);
});
