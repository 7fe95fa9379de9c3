// Production runs compiled JavaScript. `npm start` is started exactly as an operator starts it and
// the serving process is inspected from outside, through /proc: its command line and environment
// carry no TypeScript loader (tsx's --import/--require hooks, Node's own type stripping of a .ts
// entry), and it has no esbuild service running beside it (tsx's transformer). The image's CMD
// runs the same file with the same flags, and the compiled files import nothing from node_modules
// that `npm ci --omit=dev` leaves out.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/ports.ts';
import { startServerProcess } from './support/server-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
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

/** V8's code cache tag under npm start's node flags. */
/** The server's code caches under a compile cache directory (bin/compiled-server.ts), as paths relative to it. */
const v8CacheFiles = (cacheRoot: string) => readdirSync(cacheRoot, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.v8cache'));

function tagOfStartFlags(): string {
  return execFileSync(process.execPath, [...startScriptFlags(), '-p', "require('node:v8').cachedDataVersionTag()"], { encoding: 'utf8' }).trim();
}

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

  // v8.cachedDataVersionTag() is derived from V8's version and its flags: code cached under one tag
  // is refused under another. Node's built-in modules are cached under the tag of no flags at all.
  it("npm start's node flags keep Node's code cache for its built-in modules; the server's late flags take effect", () => {
    const run = (args: string[], code: string) => execFileSync(process.execPath, [...args, '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' }).trim();
    const printTag = "import { cachedDataVersionTag } from 'node:v8'; console.log(cachedDataVersionTag());";
    const builtIns = run([], printTag);
    const start = startScriptFlags();
    expect(run(start, printTag), `npm start's flags ${start.join(' ')}`).toBe(builtIns);
    // Set from the code, the flags are V8's from then on: the tag changes.
    const [before, after] = run(
      ['--import', 'tsx'],
      "import { cachedDataVersionTag } from 'node:v8'; import { setLateV8Flags } from './server/late-v8-flags.ts'; const before = cachedDataVersionTag(); setLateV8Flags('pglite'); console.log(before, cachedDataVersionTag());",
    ).split(' ');
    expect(before).toBe(builtIns);
    expect(after).not.toBe(before);
    // The code cache for the next start is made with them put back (bin/compiled-server.ts).
    for (const store of ['pglite', 'postgres']) {
      const [atStart, late, underStartFlags, lateAgain] = run(
        ['--import', 'tsx'],
        `import { cachedDataVersionTag as tag } from 'node:v8'; import { setLateV8Flags, withStartV8Flags } from './server/late-v8-flags.ts'; const atStart = tag(); setLateV8Flags('${store}'); console.log(atStart, tag(), withStartV8Flags('${store}', tag), tag());`,
      ).split(' ');
      expect(late, store).not.toBe(atStart);
      expect(underStartFlags, store).toBe(atStart);
      expect(lateAgain, store).toBe(late);
    }
  });

  // bin/compiled-server.ts: V8's code for the server's own functions, cached after the first page.
  it('caches the compiled server after its first page; the next start takes the cache, and a spoilt one is replaced', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-code-cache-'));
    // Where the server puts it by default: Node's compile cache directory in the OS's temporary one.
    const cacheRoot = join(dataDir, 'node-compile-cache');
    const port = await freePort();
    const startCompiled = (otherV8Flags: string[] = []) =>
      startServerProcess({ DATA_DIR: join(dataDir, 'data'), PORT: String(port), LOG_LEVEL: 'debug', TMPDIR: dataDir }, 60_000, ROOT, [...startScriptFlags(), ...otherV8Flags, 'dist/bin/server.js']);
    const cacheFiles = () => v8CacheFiles(cacheRoot);
    const page = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/weekly-recap-july-14`);
      expect(response.status).toBe(200);
      return response.text();
    };
    let server = await startCompiled();
    try {
      expect(server.output()).toContain('Code cache: absent');
      // Only a page's answer makes it: a health check alone writes nothing.
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(cacheFiles()).toEqual([]);
      const firstBody = await page();
      await server.waitFor(/Code cache: written for the next start/);
      expect(cacheFiles()).toHaveLength(1);
      await server.stop('SIGTERM');

      server = await startCompiled();
      expect(server.output()).toContain('Code cache: accepted');
      expect(await page()).toBe(firstBody);
      await server.stop('SIGTERM');
      expect(server.output()).not.toContain('Code cache: written');

      // A start under other V8 flags (here a profiler's) has a cache of its own and leaves this one be.
      server = await startCompiled(['--no-opt']);
      expect(server.output()).toContain('Code cache: absent');
      expect(await page()).toBe(firstBody);
      await server.waitFor(/Code cache: written for the next start/);
      await server.stop('SIGTERM');
      expect(cacheFiles()).toHaveLength(2);
      server = await startCompiled();
      expect(server.output()).toContain('Code cache: accepted');
      await server.stop('SIGTERM');

      // A cache V8 refuses (here: garbage of the same length) is replaced after the first page.
      const spoilt = join(cacheRoot, cacheFiles().find((file) => file.endsWith(`-${tagOfStartFlags()}.v8cache`))!);
      writeFileSync(spoilt, Buffer.alloc(readFileSync(spoilt).length, 7));
      server = await startCompiled();
      expect(server.output()).toContain('Code cache: rejected');
      expect(await page()).toBe(firstBody);
      await server.waitFor(/Code cache: written for the next start/);
      expect(readFileSync(spoilt).subarray(0, 64).every((byte) => byte === 7)).toBe(false);
      await server.stop('SIGTERM');
    } finally {
      await server.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  // V8 flushes the bytecode of code not run for a while; the bundle's top level runs once, at start.
  // A cache made after the first page without it made every start parse the whole bundle again
  // (bench/RESULTS.md, "a code cache that keeps the bundle's top level"). --bytecode-old-age=1 makes any
  // full collection before the first page flush it, as a slower first page or a longer start does.
  it("the cache written after the first page holds the bundle's top level: running it compiles no more than without a cache", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-code-cache-top-'));
    const port = await freePort();
    const flags = [...startScriptFlags(), '--bytecode-old-age=1'];
    const server = await startServerProcess({ DATA_DIR: join(dataDir, 'data'), PORT: String(port), LOG_LEVEL: 'debug', TMPDIR: dataDir }, 60_000, ROOT, [...flags, 'dist/bin/server.js']);
    try {
      expect((await fetch(`http://127.0.0.1:${port}/weekly-recap-july-14`)).status).toBe(200);
      await server.waitFor(/Code cache: written for the next start/);
      await server.stop('SIGTERM');
      const cacheRoot = join(dataDir, 'node-compile-cache');
      const [cacheFile] = v8CacheFiles(cacheRoot);
      const appFile = readdirSync(join(ROOT, 'dist/bin')).find((file) => /^server-app-\w+\.cjs$/.test(file))!;
      // Compiles the bundle as bin/compiled-server.ts does (the same CommonJS wrapper), under the
      // same flags, and reports how much bytecode V8 had to make to run its top level.
      const topLevelBytecode = (cachedDataPath: string | null) => {
        const code = `
          import { readFileSync } from 'node:fs'; import { Script } from 'node:vm'; import { getHeapCodeStatistics } from 'node:v8';
          const file = ${JSON.stringify(join(ROOT, 'dist/bin', appFile))};
          const cachedData = ${cachedDataPath === null ? 'undefined' : `readFileSync(${JSON.stringify(cachedDataPath)})`};
          const script = new Script('(function (exports, require, module, __filename, __dirname) {' + readFileSync(file, 'utf8') + '\\n})', { filename: file, cachedData });
          const before = getHeapCodeStatistics().bytecode_and_metadata_size;
          script.runInThisContext();
          console.log(JSON.stringify({ rejected: script.cachedDataRejected ?? null, added: getHeapCodeStatistics().bytecode_and_metadata_size - before }));`;
        return JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' })) as { rejected: boolean | null; added: number };
      };
      const withCache = topLevelBytecode(join(cacheRoot, cacheFile!));
      const withoutCache = topLevelBytecode(null);
      expect(withCache.rejected).toBe(false);
      // A cache without the top level: 88 KB of bytecode made while parsing the whole bundle, against under 1 KB.
      expect(withCache.added).toBeLessThanOrEqual(withoutCache.added * 1.5);
    } finally {
      await server.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  // Node's fetch (undici) is a built-in loaded on first use, ~33 ms of a start: a page render that
  // makes a Fetch Request, or a Resend client made when the weekly schedule starts, would put it
  // back before the first page (bench/RESULTS.md, "Runtime").
  it('answers its first pages, with the weekly schedule and a Resend mailer set up, without loading Node\'s fetch', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-no-fetch-'));
    const port = await freePort();
    // Says at exit whether the process ever loaded Node's fetch.
    const probe = "process.on('exit', () => process.stderr.write(`fetch loaded: ${process.moduleLoadList.some((name) => name.includes('undici'))}\\n`));";
    const server = await startServerProcess(
      { DATA_DIR: dataDir, PORT: String(port), RESEND_API_KEY: 're_test_no_fetch', RESEND_BASE_URL: 'http://127.0.0.1:9', DIGEST_CRON: '0 9 * * 1' },
      60_000,
      ROOT,
      [...startScriptFlags(), '--import', `data:text/javascript,${encodeURIComponent(probe)}`, 'dist/bin/server.js'],
    );
    try {
      await server.waitFor(/Weekly digest scheduled/);
      for (const [path, status] of [['/', 200], ['/weekly-recap-july-14', 200], ['/archive?q=week', 200], ['/no-such-page', 404]] as const) {
        expect((await fetch(`http://127.0.0.1:${port}${path}`)).status, path).toBe(status);
      }
      await server.stop('SIGTERM');
      expect(server.output()).toContain('fetch loaded: false');
    } finally {
      await server.stop('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

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
    ].filter((file) => file.endsWith('.js') || file.endsWith('.cjs'));
    expect(files).toContain('dist/bin/server.js');
    // The web server's own code, one CommonJS file (bin/compiled-server.ts), all ASCII: one other
    // character would make V8 keep its 5 MB source at two bytes a character.
    const app = files.filter((file) => /^dist\/bin\/server-app-\w+\.cjs$/.test(file));
    expect(app).toHaveLength(1);
    const appSource = readFileSync(join(ROOT, app[0]!), 'utf8');
    expect(Buffer.byteLength(appSource), `${app[0]} has characters outside ASCII`).toBe(appSource.length);
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
