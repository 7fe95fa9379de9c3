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

export default defineConfig({
  plugins: [react(), tailwindcss(), recapSummariesPlugin()],
  build: {
    outDir: 'dist/client',
    emptyOutDir: true,
  },
});
