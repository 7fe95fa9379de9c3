import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { recapSummaries } from './content/index.ts';

/**
 * `virtual:recap-summaries`: the card data of every week (date, path, title, headline), computed
 * from the validated content at build time. The browser bundle gets this short list instead of
 * every week's full text. Importing content/index.ts here also means an invalid recap fails the
 * build (and the test run) with the validator's message.
 */
function recapSummariesPlugin(): Plugin {
  const id = 'virtual:recap-summaries';
  const resolvedId = `\0${id}`;
  return {
    name: 'launched-weekly:recap-summaries',
    resolveId: (source) => (source === id ? resolvedId : undefined),
    load: (loadedId) => (loadedId === resolvedId ? `export default ${JSON.stringify(recapSummaries)};` : undefined),
  };
}

/**
 * Fetches the entry script at low priority. Every page arrives fully rendered, so the script only
 * makes it interactive (hydration, the signup form's toasts): it must never compete with the
 * document for a phone's bandwidth before the first paint. Chromium gives a module script in the
 * head "High" priority otherwise, which Lighthouse's simulated slow-4G run then counts as
 * render-blocking (about half a second of first contentful paint for 106 KB gzipped).
 */
function lowPriorityEntryScriptPlugin(): Plugin {
  return {
    name: 'launched-weekly:low-priority-entry-script',
    transformIndexHtml: {
      order: 'post',
      handler: (html) => html.replace(/<script type="module"(?![^>]*fetchpriority)/g, '<script type="module" fetchpriority="low"'),
    },
  };
}

export default defineConfig({
  plugins: [react(), tailwindcss(), recapSummariesPlugin(), lowPriorityEntryScriptPlugin()],
  build: {
    outDir: 'dist/client',
    emptyOutDir: true,
  },
});
