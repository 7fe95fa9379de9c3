// The two ways the server gets its renderer: the production build in dist/, or Vite's dev server
// with hot reload (`npm run dev`).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import type { Renderer } from './page-server.ts';

export const ROOT_DIR = fileURLToPath(new URL('../..', import.meta.url));
export const CLIENT_DIST = fileURLToPath(new URL('../../dist/client', import.meta.url));
const SERVER_ENTRY = new URL('../../dist/server/entry-server.js', import.meta.url);

export async function loadBuiltRenderer(): Promise<Renderer> {
  const template = await readFile(`${CLIENT_DIST}/index.html`, 'utf8').catch(() => {
    throw new Error('The site is not built: dist/client/index.html is missing. Run `npm run build` (npm start does it for you).');
  });
  const entry = (await import(SERVER_ENTRY.href)) as Pick<Renderer, 'renderApp'>;
  const inlined = await inlineStylesheets(template);
  return { renderApp: entry.renderApp, template: async () => inlined, cacheable: true };
}

/**
 * Puts the built stylesheet into the page itself. It is small (a few KB gzipped) and every page
 * needs it before the first paint; inline, a phone on a slow network saves a round trip.
 */
async function inlineStylesheets(template: string): Promise<string> {
  const links = [...template.matchAll(/<link rel="stylesheet"[^>]*href="(\/assets\/[^"]+\.css)"[^>]*>/g)];
  let result = template;
  for (const [tag, href] of links) {
    const css = await readFile(`${CLIENT_DIST}${href}`, 'utf8');
    result = result.replace(tag, () => `<style>${css.replaceAll('</style', '<\\/style')}</style>`);
  }
  return result;
}

export async function createDevRenderer(): Promise<{ renderer: Renderer; middleware: RequestHandler; close: () => Promise<void> }> {
  const { createServer } = await import('vite');
  const vite = await createServer({ root: ROOT_DIR, server: { middlewareMode: true }, appType: 'custom' });
  const rawTemplate = await readFile(`${ROOT_DIR}/index.html`, 'utf8');
  return {
    renderer: {
      cacheable: false,
      template: (url) => vite.transformIndexHtml(url, rawTemplate),
      async renderApp(request, options) {
        const entry = (await vite.ssrLoadModule('/client/entry-server.tsx')) as Pick<Renderer, 'renderApp'>;
        return entry.renderApp(request, {
          ...options,
          onError: (error) => {
            if (error instanceof Error) vite.ssrFixStacktrace(error);
            options.onError?.(error);
          },
        });
      },
    },
    middleware: vite.middlewares as unknown as RequestHandler,
    close: () => vite.close(),
  };
}

