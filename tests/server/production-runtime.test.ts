// Production runs compiled JavaScript. `npm start` is started exactly as an operator starts it and
// the serving process is inspected from outside, through /proc: its command line and environment
// carry no TypeScript loader (tsx's --import/--require hooks, Node's own type stripping of a .ts
// entry), and it has no esbuild service running beside it (tsx's transformer). The image's CMD
// runs the same file with the same flags, and the compiled files import nothing from node_modules
// that `npm ci --omit=dev` leaves out.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port.ts';
import { startServerProcess } from '../support/server-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string> };

/** A node option that makes node load or run TypeScript. */
const LOADER_OPTION = /^(--import|--loader|--experimental-loader|--require|-r|--experimental-strip-types|--experimental-transform-types)(=|$)|tsx/;

function procArgs(pid: number, file: 'cmdline' | 'environ'): string[] {
  return readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0').filter(Boolean);
}

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => {
      try {
        // Field 4 of /proc/PID/stat, after the parenthesised command name (which may hold spaces).
        const stat = readFileSync(`/proc/${candidate}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** node's own options (before the entry script) and the entry script itself. */
function splitNodeCommand(argv: string[]): { options: string[]; entry: string | undefined } {
  const entryAt = argv.findIndex((arg, i) => i > 0 && !arg.startsWith('-'));
  return { options: argv.slice(1, entryAt === -1 ? undefined : entryAt), entry: entryAt === -1 ? undefined : argv[entryAt] };
}

describe('npm start, as an operator runs it', () => {
  let dataDir: string;
  let npm: ChildProcess;
  let output = '';
  let port: number;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-npm-start-'));
    port = await freePort();
    npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: {
        PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
        HOME: process.env.HOME,
        NODE_ENV: 'test',
        DATA_DIR: dataDir,
        DIGEST_CRON: 'off',
        HOST: '127.0.0.1',
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not serve within 90 s:\n${output}`)), 90_000);
      const check = setInterval(() => {
        if (/Launched Weekly on http:/.test(output)) {
          clearInterval(check);
          clearTimeout(timer);
          resolve();
        }
      }, 50);
      npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
  }, 120_000);

  afterAll(async () => {
    for (const pid of descendantsOf(npm.pid!).reverse()) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    if (npm.exitCode === null) await new Promise((resolve) => npm.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves from a node process running dist/bin/server.js with no TypeScript loader', async () => {
    const page = await fetch(`http://127.0.0.1:${port}/weekly-recap-july-14`);
    expect(page.status).toBe(200);

    const nodes = descendantsOf(npm.pid!).filter((pid) => procArgs(pid, 'cmdline')[0]?.endsWith('node'));
    const server = nodes.find((pid) => procArgs(pid, 'cmdline').some((arg) => arg.endsWith('server.js')));
    expect(server, `no node process runs server.js among npm start's: ${nodes.map((pid) => procArgs(pid, 'cmdline').join(' ')).join(' | ')}`).toBeDefined();
    const { options, entry } = splitNodeCommand(procArgs(server!, 'cmdline'));
    expect(entry).toBe('dist/bin/server.js');
    expect(options.filter((option) => LOADER_OPTION.test(option))).toEqual([]);
    const nodeOptions = procArgs(server!, 'environ').find((variable) => variable.startsWith('NODE_OPTIONS='));
    expect(nodeOptions ?? '').not.toMatch(/--import|--loader|--require|-r |tsx|strip-types/);
    // The start script's allocator settings reach the serving process (glibc reads them at its start).
    for (const [name, value] of Object.entries(startScriptEnv())) expect(procArgs(server!, 'environ')).toContain(`${name}=${value}`);
    // tsx transforms through an esbuild service process: the server has no process of its own.
    expect(descendantsOf(server!).map((pid) => procArgs(pid, 'cmdline').join(' '))).toEqual([]);
    // Nothing from tsx or esbuild is mapped into it either.
    expect(readFileSync(`/proc/${server}/maps`, 'utf8')).not.toMatch(/tsx|esbuild/);
  });
});

/** The node options npm start gives the server (the flags between `node` and the file). */
function startScriptFlags(): string[] {
  const start = /node ((?:--\S+ )*)dist\/bin\/server\.js/.exec(manifest.scripts.start!);
  expect(start, manifest.scripts.start).not.toBeNull();
  return start![1]!.split(' ').filter(Boolean);
}

/** The `VAR=value` assignments the start script puts before `node … dist/bin/server.js`. */
function startScriptEnv(): Record<string, string> {
  const start = /((?:[A-Z_]+=\S+ )*)node (?:--\S+ )*dist\/bin\/server\.js/.exec(manifest.scripts.start!);
  expect(start, manifest.scripts.start).not.toBeNull();
  return Object.fromEntries(start![1]!.split(' ').filter(Boolean).map((assignment) => assignment.split('=', 2) as [string, string]));
}

describe('the compiled runtime', () => {
  it("the image's ENV sets the allocator settings npm start gives the server", () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const imageEnv = Object.fromEntries([...dockerfile.matchAll(/^ENV\s+(.+)$/gm)].flatMap((line) => line[1]!.trim().split(/\s+/).map((pair) => pair.split('=', 2) as [string, string])));
    const startEnv = startScriptEnv();
    expect(Object.keys(startEnv)).toContain('MALLOC_ARENA_MAX');
    for (const [name, value] of Object.entries(startEnv)) expect(imageEnv[name], `Dockerfile ENV ${name}`).toBe(value);
  });

  it("the image's CMD runs the same compiled file with the same node flags as npm start", () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const cmd = JSON.parse(/^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)![1]!) as string[];
    const { options, entry } = splitNodeCommand(cmd);
    expect(cmd[0]).toBe('node');
    expect(entry).toBe('dist/bin/server.js');
    expect(options.filter((option) => LOADER_OPTION.test(option))).toEqual([]);
    expect(options).toEqual(startScriptFlags());
  });

  // Node's compile cache (bin/server.ts turns it on): the first start writes what V8 compiled to the
  // directory, a restart reads it and serves the same pages.
  it('keeps the compiled code in the compile cache directory, and a restart on that cache serves the same page', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-compile-cache-'));
    // Where Node puts it when the server turns it on without a directory: in the OS's temporary one.
    const cacheDir = join(dataDir, 'node-compile-cache');
    const port = await freePort();
    const startCompiled = () =>
      startServerProcess({ DATA_DIR: join(dataDir, 'data'), PORT: String(port), TMPDIR: dataDir }, 60_000, ROOT, [...startScriptFlags(), 'dist/bin/server.js']);
    const page = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/weekly-recap-july-14`);
      expect(response.status).toBe(200);
      return response.text();
    };
    const cachedFiles = () => (existsSync(cacheDir) ? readdirSync(cacheDir, { recursive: true, encoding: 'utf8' }).filter((file) => statSync(join(cacheDir, file)).isFile()) : []);
    let server = await startCompiled();
    try {
      // Written once the server is ready, before any exit: a SIGKILL does not lose it.
      await expect.poll(cachedFiles).not.toEqual([]);
      const firstBody = await page();
      await server.stop('SIGKILL');
      const written = cachedFiles();

      server = await startCompiled();
      expect(await page()).toBe(firstBody);
      await server.stop('SIGTERM');
      expect(cachedFiles()).toEqual(expect.arrayContaining(written));
    } finally {
      await server.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('the scripts production runs call compiled files, and those files exist after the build', () => {
    for (const name of ['start', 'digest', 'subscribers', 'db:migrate']) {
      const script = manifest.scripts[name]!;
      expect(script, name).not.toMatch(/\btsx\b|--import/);
      const file = /(dist\/bin\/[\w-]+\.js)/.exec(script)?.[1];
      expect(file, `${name}: ${script}`).toBeDefined();
      expect(existsSync(join(ROOT, file!)), file).toBe(true);
    }
  });

  it('the compiled files import from node_modules only production dependencies', () => {
    const allowed = new Set([...Object.keys(manifest.dependencies), ...builtinModules]);
    // Loaded only on paths production never takes: `pretty: true` e-mail output, `npm run dev`, pg's
    // native driver (never installed).
    const neverLoaded = new Set(['prettier', 'vite', 'pg-native']);
    const packageOf = (specifier: string) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
    const files = [
      ...readdirSync(join(ROOT, 'dist/bin')).map((file) => join('dist/bin', file)),
      ...readdirSync(join(ROOT, 'dist/server'), { recursive: true, encoding: 'utf8' }).map((file) => join('dist/server', file)),
    ].filter((file) => file.endsWith('.js'));
    expect(files).toContain('dist/bin/server.js');
    const outside: string[] = [];
    for (const file of files) {
      // Comments dropped: a JSDoc type such as import('x').T names a package without loading it.
      const code = readFileSync(join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      const specifiers = [
        ...code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm),
        ...code.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
        ...code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
        ...code.matchAll(/(?<![\w$.])require\(\s*["']([^"']+)["']\s*\)/g),
      ].map((match) => match[1]!);
      for (const specifier of specifiers) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        const name = packageOf(specifier);
        if (allowed.has(name) || neverLoaded.has(name)) continue;
        outside.push(`${file}: ${specifier}`);
      }
      expect(specifiers.filter((specifier) => /\.tsx?$/.test(specifier)), file).toEqual([]);
    }
    expect(outside).toEqual([]);
  });
});
