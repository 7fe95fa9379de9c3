import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
// Loading the content validates it: an invalid recap fails the build (and the test run) with the
// validator's message. Nothing of it goes into the bundle: pages get their data from route loaders.
import './content/index.ts';

/**
 * Loads the entry module after the first paint instead of from the head: the built page gets a
 * small deferred loader (public/hydrate.js) that adds the entry script once the first frame is
 * drawn. Every page arrives fully rendered, so the script only makes it interactive (hydration,
 * the signup form's toasts) and should never compete with the document for a phone's bandwidth
 * or main thread before the reader sees the page. Lighthouse's simulated slow-4G run counts any
 * script fetched before the first (or largest) paint against that paint: the 106 KB gzipped
 * bundle cost about 0.8 s of first contentful paint at high priority, and its download still
 * weighed on the largest paint at low priority. Build only: the dev server keeps Vite's own tags.
 */
function entryAfterFirstPaintPlugin(): Plugin {
  return {
    name: 'launched-weekly:entry-after-first-paint',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html) {
        const entryTag = /<script type="module" crossorigin src="([^"]+)"><\/script>/;
        if (!entryTag.test(html)) throw new Error('entryAfterFirstPaintPlugin: the built index.html has no entry module script to replace.');
        return html.replace(entryTag, (_tag, src: string) => `<script defer src="/hydrate.js" data-entry="${src}"></script>`);
      },
    },
  };
}

export default defineConfig({
  plugins: [react(), tailwindcss(), entryAfterFirstPaintPlugin()],
  build: {
    // The entry loads its chunks itself, one after another, after the first paint; preload links
    // in the page would fetch them ahead of what the reader sees first.
    modulePreload: false,
    outDir: 'dist/client',
    rolldownOptions: {
      output: {
        // React in one chunk and the router in another, each evaluated in a task of its own
        // (client/entry-client.tsx); fewer, larger chunks also compress better than many small ones.
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: 'router', test: /node_modules[\\/](react-router|react-router-dom|cookie|set-cookie-parser)[\\/]/ },
          ],
        },
      },
    },
    emptyOutDir: true,
  },
});
