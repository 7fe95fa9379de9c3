// `npm run build`'s last step: compiles the processes production runs (the server and its CLIs)
// from TypeScript to JavaScript in dist/bin/, so neither `npm start` nor the container loads a
// TypeScript loader. esbuild, not a second Vite build: it bundles an entry point with everything
// it imports from this repository in one pass of well under a second, and it is already what tsx
// runs on, so the compiled code is the code the tests and `npm run dev` run.
//
// Adding a compiled CLI is one line in ENTRIES (and a package.json script `node dist/bin/NAME.js`).
import { build, type Plugin } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContentError } from '../content/validate.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
export const OUT_DIR = 'dist/bin';

/** dist/bin/NAME.js ← source. Every file these import from the repository is bundled in. */
export const ENTRIES: Record<string, string> = {
  server: 'bin/server.ts',
  digest: 'bin/digest.ts',
  migrate: 'bin/migrate.ts',
  subscribers: 'bin/subscribers.ts',
  report: 'bin/report.ts',
  preview: 'bin/preview.ts',
};

/**
 * The bundle sits in dist/bin/, not where its sources were, so a source's `import.meta.url`
 * (which locates the migrations, the built client, ...) is rewritten to the URL its file has in
 * the checkout, expressed relative to the bundle: the paths stay right wherever the checkout or
 * the image's /app is. Every output file is in dist/bin/ itself, so one relative path fits all.
 */
const sourceLocation: Plugin = {
  name: 'source-import-meta-url',
  setup(esbuild) {
    esbuild.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const fromBundle = posix.join(relative(`${root}/${OUT_DIR}`, root), relative(root, args.path));
      return {
        contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`),
        loader: args.path.endsWith('x') ? 'tsx' : 'ts',
      };
    });
  },
};

/**
 * What stays an `import` of node_modules at run time. Every other production dependency is bundled
 * into dist/bin/: resolved from node_modules, Express and the rest load ~220 CommonJS files, and
 * finding them (package.json lookups, stats, one compile each) was a fifth of the server's start-up
 * CPU. They all stay in dependencies, so the unbundled `npm run dev` and the tests find them.
 * - PGlite locates its WebAssembly module and data files next to its own code.
 * - React, React DOM and React Router are shared with the built renderer (dist/server/), which
 *   imports them from node_modules: one copy of React per process.
 * - pg-native is pg's optional native driver, never installed.
 * - prettier (@react-email/render's, only for `pretty: true` output, which nothing asks for) and
 *   vite (only `npm run dev`'s renderer) are devDependencies never loaded in production.
 */
const KEPT_AS_IMPORTS = ['@electric-sql/pglite', 'react', 'react-dom', 'react-router', 'react-router-dom', 'pg-native', 'prettier', 'vite'];

function externals(): string[] {
  return [...KEPT_AS_IMPORTS, ...KEPT_AS_IMPORTS.map((name) => `${name}/*`), ...builtinModules, 'node:*'];
}

/**
 * vega tries `import('canvas')` (a native package) and falls back to none when it is missing. The
 * report renders SVG strings only, so the bundle gets an empty module in its place: no import of a
 * package production does not install, and no native build in the image.
 */
const withoutNodeCanvas: Plugin = {
  name: 'without-node-canvas',
  setup(build) {
    build.onResolve({ filter: /^canvas$/ }, () => ({ path: 'canvas', namespace: 'without-node-canvas' }));
    build.onLoad({ filter: /.*/, namespace: 'without-node-canvas' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/**
 * The recaps go into the bundle as data, checked here: content/validated-recaps.ts is replaced by
 * the array it exports, so a compiled process neither loads the week files nor runs the schema
 * over them at every start (content/validated-recaps.ts says why). Importing it runs the checks in
 * this build's process: invalid content throws its ContentError and the build fails with it.
 */
const recapsAsData: Plugin = {
  name: 'recaps-as-data',
  setup(build) {
    build.onLoad({ filter: /\/content\/validated-recaps\.ts$/ }, async () => {
      let validatedRecaps;
      try {
        ({ validatedRecaps } = await import('../content/validated-recaps.ts'));
      } catch (error) {
        // esbuild prints it as the build's error, with every problem on its own line.
        if (error instanceof ContentError) return { errors: [{ text: error.message }] };
        throw error;
      }
      // JSON.parse of one string is quicker for V8 to load than the same data as object literals.
      return { contents: `export const validatedRecaps = JSON.parse(${JSON.stringify(JSON.stringify(validatedRecaps))});`, loader: 'js' };
    });
  },
};

export async function buildNode(): Promise<void> {
  // Chunk names are content hashes: without a clean start, every build would leave the last one's behind.
  await rm(`${root}/${OUT_DIR}`, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    outdir: OUT_DIR,
    entryPoints: Object.entries(ENTRIES).map(([out, source]) => ({ in: source, out })),
    bundle: true,
    // One copy of the code the entry points share; bin/server.ts's dynamic import of the server
    // becomes a chunk loaded after Node's compile cache is on.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node24',
    external: externals(),
    jsx: 'automatic',
    sourcemap: 'linked',
    // Stack traces in production logs keep the source's function names.
    keepNames: true,
    // Without comments and indentation the code is ASCII-only and about a quarter smaller. V8 holds
    // a module's source for as long as the process runs, and a single non-Latin-1 character (a
    // dash in a library's comment) makes it hold the whole file at two bytes a character: the
    // server held 7.4 MB of source, 5.2 MB once minified. Names stay (above); for a stack
    // trace's line and column in the sources, run node with --enable-source-maps (the .map files
    // are built beside the code).
    minifyWhitespace: true,
    logLevel: 'warning',
    plugins: [sourceLocation, withoutNodeCanvas, recapsAsData],
    // Bundled CommonJS (html-to-text's) may call require(); ESM has none of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildNode().catch((error: unknown) => {
    // A failed esbuild build (its error carries `errors`) has printed each of them already.
    if (error instanceof Error && 'errors' in error) process.exit(1);
    throw error;
  });
}
