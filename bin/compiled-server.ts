// The compiled web server's entry point: the build makes it dist/bin/server.js, what `npm start` and
// the image run (`npm run dev` and the tests run bin/server.ts from source).
//
// The server's own code (bin/serve.ts and everything it bundles, dist/bin/server-app-HASH.cjs) is
// compiled here with a V8 code cache made AFTER its first page. Node's compile cache, on for the
// dependencies still loaded from node_modules, serialises a module right after compiling it, when V8
// has compiled only its top level: every function a start and a page call is then compiled again
// on every start (~80 ms of a ~450 ms restart, V8's function events). A cache made once the first
// page has been answered holds them all (bench/RESULTS.md, "the server's code cached after its
// first page"). The cache lives in Node's compile cache directory (NODE_COMPILE_CACHE, or the OS's
// temporary directory), one file per build and per V8 flag set (V8's tag, which Node's version also
// changes); with that directory off or unusable, the server compiles from source as before.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { constants as moduleConstants, createRequire, enableCompileCache } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedDataVersionTag, setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import type { CodeCache, start as startServer } from './serve.ts';

/** The bundle's file name in dist/bin, content-hashed, set by the build (scripts/build-node.ts). */
declare const SERVER_APP_FILE: string;

const compileCache = enableCompileCache();
const { ENABLED, ALREADY_ENABLED } = moduleConstants.compileCacheStatus;
const cacheDir = compileCache.status === ENABLED || compileCache.status === ALREADY_ENABLED ? compileCache.directory : undefined;

// import.meta.url is this source file's, in the built bundle too (scripts/build-node.ts).
const appFile = fileURLToPath(new URL(`../dist/bin/${SERVER_APP_FILE}`, import.meta.url));
const CACHE_PREFIX = 'launched-weekly-server-app-';
const build = basename(appFile, '.cjs').slice('server-app-'.length);
// V8 accepts a cache only under the flags it was made with (the tag changes with them); the
// server's late flags (server/late-v8-flags.ts) are put back to these for the serialiser.
const tagAtCompile = cachedDataVersionTag();
// One file per build (the content hash in the bundle's name: V8 itself checks only the source's
// length) and per V8 flags, so a process started with other flags (a profiler's, --expose-gc)
// neither takes the cache nor replaces it.
// The format is bumped when what a cache holds changes while the bundle does not, so that a cache of
// the old kind is neither taken nor kept (2: made with the bundle's top level kept, see below).
const CACHE_FORMAT = 2;
const thisBuild = `${CACHE_PREFIX}${build}-f${CACHE_FORMAT}-`;
const cacheFile = cacheDir && join(cacheDir, `${thisBuild}${tagAtCompile}.v8cache`);

const { script, status } = compileApp();
const wanted = status === 'absent' || status === 'rejected';

// V8 drops the bytecode of functions that have not run for a while (bytecode flushing, at its full
// collections). The bundle's top level and its modules' bodies run once, at start: by the first
// page they were often gone, the cache written then lacked them, and every start from it parsed the
// whole 5 MB bundle again, ~100 ms (bench/RESULTS.md, "a code cache that keeps the bundle's top level").
// So a start that will write the cache flushes nothing until it has, or for at most this long when
// no page comes (a replica that only answers health checks and signups). The flag is part of V8's
// tag: the modules Node compiles meanwhile (the renderer, React) are cached by Node under it, and
// the next start compiles those ~30 once more and caches them again (~10 ms, once per build).
const KEEP_BYTECODE_AT_MOST_MS = 60_000;
if (wanted) setFlagsFromString('--no-flush-bytecode');
const flushingResumes = wanted ? setTimeout(resumeBytecodeFlushing, KEEP_BYTECODE_AT_MOST_MS).unref() : undefined;
/** V8's default again, for the rest of the process's life and for the cache's tag (only a start that wanted the cache paused it). */
function resumeBytecodeFlushing() {
  clearTimeout(flushingResumes);
  setFlagsFromString('--flush-bytecode');
}

/** The bundle as a script, from the cache when there is one (read here, so its 1–2 MB are not kept). */
function compileApp(): { script: Script; status: CodeCache['status'] } {
  let cachedData: Buffer | undefined;
  try {
    if (cacheFile) cachedData = readFileSync(cacheFile);
  } catch {
    // None yet: this start writes it.
  }
  // The CommonJS wrapper on the source's first line, so line numbers in stack traces stay the file's.
  const compiled = new Script(`(function (exports, require, module, __filename, __dirname) {${readFileSync(appFile, 'utf8')}\n})`, { filename: appFile, cachedData });
  return { script: compiled, status: !cacheFile ? 'off' : !cachedData ? 'absent' : compiled.cachedDataRejected ? 'rejected' : 'accepted' };
}

const codeCache: CodeCache = {
  status,
  wanted,
  save(underStartFlags) {
    if (!cacheDir || !cacheFile || !codeCache.wanted) return false;
    resumeBytecodeFlushing();
    const data = underStartFlags(() => (cachedDataVersionTag() === tagAtCompile ? script.createCachedData() : null));
    if (!data) return false;
    // Written whole or not at all, so a start never reads half a cache (replicas may share the directory).
    const partial = `${cacheFile}.${process.pid}.partial`;
    writeFileSync(partial, data);
    renameSync(partial, cacheFile);
    for (const name of readdirSync(cacheDir)) {
      // Earlier builds' caches (or caches of an earlier format), which no start of this build can use.
      if (name.startsWith(CACHE_PREFIX) && name.endsWith('.v8cache') && !name.startsWith(thisBuild)) rmSync(join(cacheDir, name), { force: true });
    }
    return true;
  },
};

const app = { exports: {} as { start: typeof startServer } };
(script.runInThisContext() as (...args: unknown[]) => void)(app.exports, createRequire(appFile), app, appFile, dirname(appFile));
await app.exports.start({ codeCache });
