// The container image, rebuilt without a Docker engine: this test reads the Dockerfile and
// .dockerignore and repeats the build stage in a temporary directory (the COPY lines, honouring
// .dockerignore, then the RUN lines: npm ci, build, prune to production dependencies), then
// starts the image's CMD with the image's ENV and a production environment against a real
// PostgreSQL, and runs its HEALTHCHECK. When the Dockerfile, .dockerignore or the code drift apart
// (a file the server needs left out, a dev dependency needed at run time) this fails.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { freePort } from '../../scripts/free-port.ts';

if (!postgresUrl) console.warn('[image-steps] No PostgreSQL: the container image steps are not rehearsed (production needs a real database).');

const CONTEXT = fileURLToPath(new URL('../..', import.meta.url));

interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions with continuation lines joined, comments and parser directives dropped. */
function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const match = /^(\w+)\s+([\s\S]*)$/.exec(full);
    if (match) instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim() });
  }
  return instructions;
}

function stages(instructions: Instruction[]): Instruction[][] {
  const result: Instruction[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

/** COPY's flags (--from=, --chown=, ...) and its sources and destination. */
function copyParts(args: string) {
  const words = args.split(/\s+/);
  const flags = Object.fromEntries(
    words.filter((w) => w.startsWith('--')).map((w) => {
      const [name, value = ''] = w.slice(2).split('=');
      return [name!, value];
    }),
  );
  const paths = words.filter((w) => !w.startsWith('--'));
  return { flags, sources: paths.slice(0, -1), dest: paths.at(-1)! };
}

function execForm(args: string): string[] {
  const parsed = JSON.parse(args) as unknown;
  expect(Array.isArray(parsed), `expected the exec (JSON) form: ${args}`).toBe(true);
  return parsed as string[];
}

// .dockerignore as Docker reads it: patterns relative to the context, `**` across directories, a
// matching directory excludes what is below it, `!` re-includes, the last matching line wins.
interface IgnoreRule {
  pattern: string;
  negate: boolean;
  regex: RegExp;
}

function parseDockerignore(text: string): IgnoreRule[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negate = line.startsWith('!');
      const pattern = posix.normalize(line.slice(negate ? 1 : 0).replace(/^\/+/, '')).replace(/\/+$/, '');
      let source = '';
      for (let i = 0; i < pattern.length; i++) {
        const rest = pattern.slice(i);
        if (rest.startsWith('**/')) {
          source += '(?:.*/)?';
          i += 2;
        } else if (rest.startsWith('**')) {
          source += '.*';
          i += 1;
        } else if (rest[0] === '*') source += '[^/]*';
        else if (rest[0] === '?') source += '[^/]';
        else source += rest[0]!.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { pattern, negate, regex: new RegExp(`^${source}$`) };
    });
}

function isIgnored(path: string, rules: IgnoreRule[]): boolean {
  const parts = path.split('/');
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const rule of rules) {
    if (candidates.some((candidate) => rule.regex.test(candidate))) ignored = !rule.negate;
  }
  return ignored;
}

/** Every file of the context below `from` that the build would receive. */
function contextFiles(from: string, rules: IgnoreRule[]): string[] {
  const files: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(CONTEXT, relative), { withFileTypes: true })) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      const reincludedBelow = rules.some((rule) => rule.negate && rule.pattern.startsWith(`${path}/`));
      if (isIgnored(path, rules) && !reincludedBelow) continue;
      if (entry.isDirectory()) walk(path);
      else if (!isIgnored(path, rules)) files.push(path);
    }
  };
  const start = posix.normalize(from).replace(/^\.\/?|\/$/g, '');
  if (start !== '' && statSync(join(CONTEXT, start)).isFile()) {
    if (isIgnored(start, rules)) throw new Error(`COPY ${from}: excluded by .dockerignore, so the build would fail`);
    return [start];
  }
  walk(start);
  return files;
}

/** COPY from the build context into the image's working directory, as `docker build` would. */
function copyFromContext(args: string, workdir: string, rules: IgnoreRule[]): string[] {
  const { flags, sources, dest } = copyParts(args);
  expect(flags.from, 'only COPY lines from the build context are replayed here').toBeUndefined();
  const copied: string[] = [];
  for (const source of sources) {
    const base = posix.normalize(source).replace(/^\.\/?|\/$/g, '');
    const sourceIsFile = base !== '' && statSync(join(CONTEXT, base)).isFile();
    for (const file of contextFiles(source, rules)) {
      // A directory's contents land in the destination; a file lands in it by its own name.
      const relative = sourceIsFile ? posix.basename(file) : base === '' ? file : file.slice(base.length + 1);
      const target = join(workdir, dest, relative);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(CONTEXT, file), target);
      copied.push(file);
    }
  }
  return copied;
}


const dockerfile = parseDockerfile(readFileSync(join(CONTEXT, 'Dockerfile'), 'utf8'));
const [buildStage = [], runtimeStage = []] = stages(dockerfile);
const ignoreRules = parseDockerignore(readFileSync(join(CONTEXT, '.dockerignore'), 'utf8'));
const runtimeArg = (keyword: string) => runtimeStage.filter((i) => i.keyword === keyword).map((i) => i.args);

describe('the Dockerfile', () => {
  it('builds on the official Node 24 slim image in two stages, caching the dependency layer', () => {
    expect(stages(dockerfile)).toHaveLength(2);
    expect(buildStage[0]!.args).toBe('node:24-bookworm-slim AS build');
    expect(runtimeStage[0]!.args).toBe('node:24-bookworm-slim');
    const steps = buildStage.filter((i) => i.keyword === 'COPY' || i.keyword === 'RUN');
    // Manifests first, npm ci, then the source: a code change reuses the installed dependencies.
    expect(steps[0]).toEqual({ keyword: 'COPY', args: 'package.json package-lock.json ./' });
    expect(steps[1]!.keyword).toBe('RUN');
    expect(steps[1]!.args).toMatch(/\bnpm ci\b/);
    const lastRun = steps.filter((s) => s.keyword === 'RUN').at(-1)!.args;
    expect(lastRun).toMatch(/npm run build && npm prune --omit=dev/);
  });

  it('runs production-only as the non-root node user, under tini, with a health check and a data volume', () => {
    expect(runtimeArg('ENV').join(' ')).toMatch(/\bNODE_ENV=production\b/);
    expect(runtimeArg('ENV').join(' ')).toMatch(/\bDATA_DIR=\/data\b/);
    expect(runtimeArg('USER')).toEqual(['node']);
    expect(runtimeArg('EXPOSE')).toEqual(['3000']);
    expect(runtimeArg('VOLUME')).toEqual(['/data']);
    expect(runtimeArg('RUN').join('\n')).toMatch(/apt-get install -y --no-install-recommends tini/);
    expect(execForm(runtimeArg('ENTRYPOINT')[0]!)).toEqual(['/usr/bin/tini', '--']);
    expect(runtimeArg('HEALTHCHECK')[0]).toMatch(/\/healthz/);
    // The volume is declared after /data is given to node, so a new volume starts out writable.
    const keywords = runtimeStage.map((i) => i.keyword);
    expect(keywords.indexOf('VOLUME')).toBeGreaterThan(runtimeStage.findIndex((i) => i.keyword === 'RUN' && /chown node:node \/data/.test(i.args)));
    expect(keywords.indexOf('USER')).toBeGreaterThan(keywords.lastIndexOf('RUN'));
  });

  it('.dockerignore keeps secrets, local state, tests and build output out of the context', () => {
    for (const path of ['.env', '.env.production', 'node_modules/vite/package.json', 'dist/client/index.html', 'data/db/PG_VERSION', '.git/HEAD', 'tests/server/config.test.ts', 'server/logger.test.ts', 'bench/index.ts']) {
      expect(isIgnored(path, ignoreRules), path).toBe(true);
    }
    for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', '.env.example', 'bin/server.ts', 'content/index.ts', 'supabase/migrations/20250201000000_email_signups.sql']) {
      expect(isIgnored(path, ignoreRules), path).toBe(false);
    }
  });
});

/** The build stage's COPY and RUN lines, in order, in `workdir`; what each step did goes to `stepTimes`. */
function replayBuildStage(workdir: string, stepTimes: string[]): void {
  // npm ci may use the local npm cache (--prefer-offline).
  // The machine's own environment (registry, proxy and CA settings) without the test runner's.
  const buildEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV' && !name.startsWith('VITEST') && !name.startsWith('npm_')),
  );
  for (const instruction of buildStage) {
    const started = Date.now();
    if (instruction.keyword === 'COPY') {
      const copied = copyFromContext(instruction.args, workdir, ignoreRules);
      expect(copied.length, `COPY ${instruction.args} copied nothing`).toBeGreaterThan(0);
      stepTimes.push(`COPY ${instruction.args} (${copied.length} files)`);
    } else if (instruction.keyword === 'RUN') {
      const command = instruction.args.replace(/^(--mount=\S+\s+)+/, '').replace(/\bnpm ci\b/, 'npm ci --prefer-offline');
      const result = spawnSync('sh', ['-c', command], {
        cwd: workdir,
        env: buildEnv,
        encoding: 'utf8',
        timeout: 200_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(result.status, `RUN ${command}\n${result.stdout}\n${result.stderr}`).toBe(0);
      stepTimes.push(`RUN ${command} ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  }
}

/** Production dependencies only: the server's runtime ones are there, the build and test tools are not. */
function expectProductionTreeOnly(workdir: string): void {
  for (const runtime of ['express', 'pg', 'pino', 'svix', 'react-dom']) expect(existsSync(join(workdir, 'node_modules', runtime)), runtime).toBe(true);
  // No TypeScript loader and no build-time tool is even installed: the image runs dist/bin's JavaScript.
  for (const devOnly of ['tsx', 'esbuild', 'vite', 'vitest', 'typescript', 'eslint', 'playwright-core', 'satori', 'prettier', '@resvg/resvg-js']) expect(existsSync(join(workdir, 'node_modules', devOnly)), devOnly).toBe(false);
  expect(existsSync(join(workdir, 'dist/client/index.html'))).toBe(true);
  expect(existsSync(join(workdir, 'tests'))).toBe(false);
}

/** The runtime stage's environment: the image's ENV, then the operator's production environment, serving on `port`. */
async function productionEnv(port: number, dataDir: string, databaseUrl: string): Promise<Record<string, string | undefined>> {
  const imageEnv: Record<string, string> = Object.fromEntries(
    runtimeArg('ENV')
      .flatMap((args) => args.split(/\s+/))
      .map((pair) => pair.split('=') as [string, string]),
  );
  const closedPort = await freePort();
  return {
    PATH: process.env.PATH,
    ...imageEnv,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    SITE_URL: 'https://launchedweekly.example',
    UNSUBSCRIBE_SECRET: 'image-steps-unsubscribe-secret-0123456789abcdef',
    MAIL_FROM: 'Launched Weekly <digest@launchedweekly.example>',
    RESEND_API_KEY: 're_image_steps_test_key',
    // Nothing listens there: no e-mail can leave this test.
    RESEND_BASE_URL: `http://127.0.0.1:${closedPort}`,
    DIGEST_CRON: 'off',
  };
}

/** Resolves once the server says it listens; rejects when it exits first or is not up within a minute. */
function untilListening(server: ChildProcess, output: () => string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output()}`)), 60_000);
    const check = () => {
      if (/Launched Weekly on http:/.test(output())) {
        clearTimeout(timer);
        resolve();
      }
    };
    server.stdout!.on('data', check);
    server.stderr!.on('data', check);
    server.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output()}`)));
  });
}

/** The site at `base` answers from PostgreSQL: health, readiness, a recap page, and a signup stored in the database. */
async function expectServesFromPostgres(base: string, databaseUrl: string): Promise<void> {
  expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
  expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', store: 'postgres' });
  const recap = recaps.find((r) => r.path === '/weekly-recap-april-13')!;
  const page = await fetch(`${base}${recap.path}`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain(recap.headline);
  // Absolute links use SITE_URL, not the address the request came to.
  expect(html).toContain('https://launchedweekly.example/weekly-recap-april-13');
  expect(page.headers.get('strict-transport-security')).toMatch(/max-age=31536000/);

  const signup = await fetch(`${base}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'image@example.com' }) });
  expect(signup.status).toBe(201);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    expect((await client.query('select email from public.email_signups')).rows).toEqual([{ email: 'image@example.com' }]);
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgresUrl)('the image steps, replayed', () => {
  let workdir: string;
  let dataDir: string;
  let database: TestDatabase;
  let server: ChildProcess | undefined;
  let output = '';
  const stepTimes: string[] = [];

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), 'launched-weekly-image-'));
    dataDir = mkdtempSync(join(tmpdir(), 'launched-weekly-image-data-'));
    database = await createTestDatabase();
  });

  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    await database?.drop();
    rmSync(workdir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
    if (stepTimes.length > 0) console.log(`[image-steps] ${stepTimes.join(', ')}`);
  });

  it('builds, prunes to production dependencies, starts in production on PostgreSQL and answers', async () => {
    replayBuildStage(workdir, stepTimes);

    // What the runtime stage copies (COPY --from=build /app /app), for bench/RESULTS.md.
    const sizeMiB = (path: string) => (Number(spawnSync('du', ['-sk', path], { encoding: 'utf8' }).stdout.split('\t')[0]) / 1024).toFixed(0);
    stepTimes.push(`/app after the build stage: ${sizeMiB(workdir)} MiB (node_modules ${sizeMiB(join(workdir, 'node_modules'))} MiB, dist ${sizeMiB(join(workdir, 'dist'))} MiB)`);

    expectProductionTreeOnly(workdir);

    const port = await freePort();
    const env = await productionEnv(port, dataDir, database.url);
    expect(env.NODE_ENV).toBe('production');
    const [command, ...args] = execForm(runtimeArg('CMD')[0]!);
    expect(command).toBe('node');
    const startedAt = Date.now();
    // WORKDIR /app, where the build stage left everything (COPY --from=build /app /app).
    server = spawn(process.execPath, args, { cwd: workdir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await untilListening(server, () => output);
    stepTimes.push(`CMD up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    const base = `http://127.0.0.1:${port}`;

    await expectServesFromPostgres(base, database.url);

    // The image's HEALTHCHECK command, as Docker runs it inside the container.
    const [healthCommand, ...healthArgs] = execForm(runtimeArg('HEALTHCHECK')[0]!.replace(/^(--\S+\s+)*CMD\s+/, ''));
    expect(healthCommand).toBe('node');
    expect(spawnSync(process.execPath, healthArgs, { env: { ...env }, timeout: 10_000 }).status).toBe(0);

    // Production logs are JSON lines.
    const firstLine = output.split('\n').find((line) => line.includes('Launched Weekly on'))!;
    expect(JSON.parse(firstLine)).toMatchObject({ level: 30, msg: expect.stringMatching(/^Launched Weekly on http:/) });

    const exited = new Promise<number | null>((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 240_000);
});
