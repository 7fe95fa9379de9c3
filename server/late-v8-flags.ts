// V8 flags the server sets on itself while it starts, instead of on node's command line. Each of
// them changes how V8 generates code or sizes its heap, and any such flag on the command line makes
// V8 refuse the code cache Node ships its built-in modules with (the cache is tied to a hash of the
// flags): every start then compiles http, streams, zlib, crypto and fetch from source, ~70 ms more
// CPU (bench/RESULTS.md, note "Start-up on a slower machine"). Set from here, once the built-ins the
// server uses are loaded, they apply to everything V8 compiles or collects from then on. Size flags
// (--max-semi-space-size) do not touch the hash and stay on the command line.
import { setFlagsFromString } from 'node:v8';

type StoreKind = 'postgres' | 'supabase' | 'pglite';

/**
 * The embedded database's WebAssembly (PGlite, 9 MB) stays on V8's baseline compiler: without it
 * V8 compiles the hot part again with its optimising compiler in the background and keeps ~100 MB
 * more for it. V8 decides a module's tiers when it compiles it, so these are set before PGlite is
 * opened; --liftoff-only's implications are spelled out, as V8 applies implications only to the
 * command line.
 */
const WASM_BASELINE_ONLY = ['--liftoff-only', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering'];

/**
 * The old generation grows to 1.25 × what the last full collection kept (V8's default is up to
 * 4 ×: 30–130 MB more under load for a heap of ~30 MB in use). V8 reads it at every full
 * collection. Set once the server listens, not before: while it loads and opens its store the heap
 * only grows, and held to 1.25 × it was collected in full again and again (seven full collections
 * while PGlite started).
 */
const LEAN_OLD_GENERATION = ['--heap-growing-percent=25'];

/** Every flag a server on this store sets on itself, in the order it sets them. */
export function lateV8Flags(store: StoreKind): string[] {
  return [...(store === 'pglite' ? WASM_BASELINE_ONLY : []), ...LEAN_OLD_GENERATION];
}

function setV8Flags(flags: readonly string[]): void {
  // Node's fetch classes (Request, made by every page render) are a built-in loaded on first use:
  // loaded before the flags change, they still come from Node's code cache.
  void globalThis.Request;
  for (const flag of flags) setFlagsFromString(flag);
}

/** Call just before the store is opened. */
export function setV8FlagsBeforeStore(store: StoreKind): void {
  if (store === 'pglite') setV8Flags(WASM_BASELINE_ONLY);
}

/** Call once the server listens. */
export function setV8FlagsOnceListening(): void {
  setV8Flags(LEAN_OLD_GENERATION);
}
