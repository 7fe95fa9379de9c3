// The embedded database's owner lock ends with its process. `npm start` stopped
// as a process manager does it (SIGTERM to the group, SIGKILL 100 ms after npm has exited, while
// node may still be shutting down or a zombie) and started again at once: it starts, ten times in
// a row. A server SIGKILLed and started again under the same pid (pid 1 of a new PID namespace,
// as in a container): it starts. A second live process on the same directory is still refused.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port.ts';

const ROOT = new URL('../..', import.meta.url);
const READY = /Launched Weekly on http:/;
const canUnshare = spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0;

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `command args` in a process group of its own, resolved once it prints the ready line (or exits). */
async function start(command: string, args: string[], env: Record<string, string>): Promise<Started> {
  const child = spawn(command, args, { cwd: ROOT, detached: true, env: { PATH: process.env.PATH, NODE_ENV: 'test', HOST: '127.0.0.1', DIGEST_CRON: 'off', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    const check = () => READY.test(output) && resolve();
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then(() => resolve());
  });
  return { child, output: () => output, exited };
}

const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // The whole group is gone already.
  }
};

describe('the embedded database lock', () => {
  let dataDir: string;
  let env: Record<string, string>;
  const leftovers: ChildProcess[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lw-lock-'));
    const port = await freePort();
    env = { DATA_DIR: dataDir, PORT: String(port) };
  });
  afterAll(async () => {
    for (const child of leftovers) killGroup(child, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('npm start, SIGTERM to its group, SIGKILL 100 ms after npm exits, npm start at once: it starts, ten times in a row', async () => {
    let running = await start('npm', ['start'], env);
    leftovers.push(running.child);
    for (let round = 0; round < 10; round++) {
      expect(running.output(), `round ${round}`).toMatch(READY);
      killGroup(running.child, 'SIGTERM');
      await running.exited;
      await new Promise((resolve) => setTimeout(resolve, 100));
      killGroup(running.child, 'SIGKILL');
      running = await start('npm', ['start'], env);
      leftovers.push(running.child);
    }
    expect(running.output()).toMatch(READY);
    expect(running.output()).not.toMatch(/in use by process/);
    killGroup(running.child, 'SIGTERM');
    await running.exited;
  }, 600_000);

  it.skipIf(!canUnshare)('starts again under the same pid after a SIGKILL (pid 1 of a new PID namespace, as in a container)', async () => {
    const server = ['--pid', '--fork', process.execPath, 'dist/bin/server.js'];
    const first = await start('unshare', server, env);
    leftovers.push(first.child);
    expect(first.output()).toMatch(READY);
    killGroup(first.child, 'SIGKILL');
    await first.exited;
    const second = await start('unshare', server, env);
    leftovers.push(second.child);
    expect(second.output()).toMatch(READY);
    expect(second.output()).not.toMatch(/in use by process/);

    // A second live process on the same directory is refused, with the owner's pid in its namespace.
    const intruder = spawnSync(process.execPath, ['dist/bin/server.js'], { cwd: ROOT, env: { PATH: process.env.PATH, NODE_ENV: 'test', HOST: '127.0.0.1', DIGEST_CRON: 'off', ...env, PORT: '0' }, encoding: 'utf8', timeout: 60_000 });
    expect(intruder.status).toBe(1);
    expect(intruder.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^(?:\S+ FATAL )?The embedded database .*\/db is in use by process 1 on .* Only one process may open it: stop that process first/)]);
    killGroup(second.child, 'SIGTERM');
    await second.exited;
  }, 300_000);
});
