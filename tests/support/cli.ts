// The project's commands as real child processes, as an operator or cron runs them. The child gets
// only the environment a test names (plus PATH, HOME and NODE_ENV=test unless the test sets it), so
// nothing leaks in from the test run; what it prints is collected for the test to read, and the
// test can kill it at any moment.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

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

/** `command args…` in `cwd` (the repository by default) with `env` as its whole environment. */
export function startCli(command: string, args: readonly string[], env: Record<string, string>, cwd = ROOT): CliRun {
  const child = spawn(command, args, {
    cwd,
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

/** `npm run --silent SCRIPT -- ARGS…`, run to its end: the command as the operator types it. */
export function npmRun(script: string, args: readonly string[], env: Record<string, string>, cwd = ROOT): Promise<CliResult> {
  return startCli('npm', ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])], env, cwd).done;
}

/** The digest's entry point from source (bin/digest.ts), so a test needs no build to kill it mid-run. */
export function startDigestCli(args: readonly string[], env: Record<string, string>): CliRun {
  return startCli(process.execPath, ['--import', 'tsx', 'bin/digest.ts', ...args], env);
}
