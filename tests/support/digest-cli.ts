// Runs `npm run digest`'s entry point as a real child process, as an operator or cron would, so
// tests can kill it at any moment and read its JSON report.
import { spawn, type ChildProcess } from 'node:child_process';

const ROOT = new URL('../..', import.meta.url);

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/** `env` is the whole environment of the child (plus PATH and HOME): nothing leaks in from the test run. */
export function startDigestCli(args: readonly string[], env: Record<string, string>): CliRun {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/digest.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}
