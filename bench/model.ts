// `npm run bench -- model`: the model-based test of the subscriber's life (tests/subscriber-model/)
// at length: BENCH_MODEL_LIVES generated lives per store (default 100,000) on PGlite from the seed
// and on PostgreSQL, run by Vitest as `npm test` runs it, only longer. Records how many lives ran,
// how long they took and whether any failed (with its seed, path and shortest sequence, as
// fast-check prints them) in bench/RESULTS.md. BENCH_MODEL_PRINT_ONLY=1 prints instead.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { recordResults } from './support/results.ts';

const LIVES = Number(process.env.BENCH_MODEL_LIVES ?? 100_000);
const FILES = ['tests/subscriber-model/lives-pglite.test.ts', 'tests/subscriber-model/lives-postgres.test.ts'];

function runVitest(): Promise<{ code: number; output: string; seconds: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['vitest', 'run', ...FILES], { env: { SEED: 'random', ...process.env, MODEL_LIVES: String(LIVES) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      process.stderr.write(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output, seconds: (performance.now() - started) / 1000 }));
  });
}

export async function runModelBench(): Promise<void> {
  if (!Number.isInteger(LIVES) || LIVES < 1) throw new Error('BENCH_MODEL_LIVES must be a whole number of lives, at least 1.');
  const load = loadavg()[0]!.toFixed(1);
  const { code, output, seconds } = await runVitest();
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  const failures = plain.split('\n').filter((line) => /Counterexample|seed:|Caused by/.test(line));
  const body = [
    `| lives per store | stores | outcome | wall time | load at start |`,
    `|---|---|---|---|---|`,
    `| ${LIVES.toLocaleString('en')} | PGlite (seed), PostgreSQL | ${code === 0 ? 'no failure' : 'FAILED'} | ${seconds.toFixed(0)} s | ${load} |`,
    ...(failures.length > 0 ? ['', 'Failures (replay with SEED, SEED_PATH and SEED_COMMANDS, the replayPath in the counterexample):', '', ...failures.map((line) => `    ${line.trim()}`)] : []),
  ].join('\n');
  if (process.env.BENCH_MODEL_PRINT_ONLY === '1') console.log(body);
  else await recordResults("The subscriber's life: generated lives against the table", `BENCH_MODEL_LIVES=${LIVES} npm run bench -- model`, body);
  if (code !== 0) process.exitCode = 1;
}
