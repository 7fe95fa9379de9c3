// V8 flags the server sets on itself once its own modules are loaded, instead of on node's command
// line. Each of them changes how V8 generates code or sizes its heap, and any such flag on the
// command line makes V8 refuse the code cache Node ships its built-in modules with (the cache is
// tied to a hash of the flags): every start then compiles http, streams, zlib, crypto and fetch
// from source, ~70 ms more CPU (bench/RESULTS.md, note "Start-up on a slower machine"). Set here,
// after the built-ins the server uses are loaded, they apply to everything V8 compiles or collects
// from then on. Size flags (--max-semi-space-size) do not touch the hash and stay on the command
// line, read once when the heap is made.
import { setFlagsFromString } from 'node:v8';
import type { StoreConfig } from './config.ts';

type StoreKind = StoreConfig['kind'];

/** A late flag, and the value V8 starts a process with (what the code cache of a start is made under). */
interface LateFlag {
  set: string;
  atStart: string;
}

/**
 * The old generation grows to 1.25 × what the last full collection kept (V8's default is up to
 * 4 ×: 30–130 MB more under load for a heap of ~30 MB in use). V8 reads it at every collection.
 */
const LEAN_OLD_GENERATION: readonly LateFlag[] = [{ set: '--heap-growing-percent=25', atStart: '--heap-growing-percent=0' }];

/**
 * The embedded database's WebAssembly (PGlite, 9 MB) stays on V8's baseline compiler: without it
 * V8 compiles the hot part again with its optimising compiler in the background and keeps ~100 MB
 * more for it. Set before PGlite is opened, they hold as on the command line (bench/RESULTS.md,
 * "Runtime"). What --liftoff-only implies on the command line is spelled out: set at run time with
 * --liftoff-only alone (an earlier attempt), PGlite's memory grew as without it.
 */
const WASM_BASELINE_ONLY: readonly LateFlag[] = [
  { set: '--liftoff-only', atStart: '--no-liftoff-only' },
  { set: '--no-wasm-tier-up', atStart: '--wasm-tier-up' },
  { set: '--no-wasm-dynamic-tiering', atStart: '--wasm-dynamic-tiering' },
];

/** The WebAssembly ones only where there is WebAssembly. */
const lateFlags = (store: StoreKind): readonly LateFlag[] => (store === 'pglite' ? [...LEAN_OLD_GENERATION, ...WASM_BASELINE_ONLY] : LEAN_OLD_GENERATION);

/** The flags for a server on this store. */
export function lateV8Flags(store: StoreKind): string[] {
  return lateFlags(store).map((flag) => flag.set);
}

/**
 * Sets them, for the server, the benchmarks' servers and nothing else: call it once the modules are
 * loaded and before the store is opened.
 */
export function setLateV8Flags(store: StoreKind): void {
  for (const flag of lateFlags(store)) setFlagsFromString(flag.set);
}

/**
 * Runs `make` with the late flags back at V8's start-up values, then sets them again: for code V8
 * caches for the next start (bin/compiled-server.ts). The server's code is compiled before any
 * late flag is set, and V8 refuses a cache made under other flags. `make` runs synchronously, with
 * no JavaScript or WebAssembly of the server running meanwhile.
 */
export function withStartV8Flags<T>(store: StoreKind, make: () => T): T {
  const late = lateFlags(store);
  for (const flag of late) setFlagsFromString(flag.atStart);
  try {
    return make();
  } finally {
    for (const flag of late) setFlagsFromString(flag.set);
  }
}
