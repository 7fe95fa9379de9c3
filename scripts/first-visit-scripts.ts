// Which scripts of the client build a first visit loads, read from a rendered page and the built
// chunks: the deferred loader (a classic script), the entry module it names, the modules those
// import statically, and the chunks the entry imports dynamically to hydrate the page (it loads
// React, the router and the app one after another; see client/entry-client.tsx). Dynamic imports
// further down (the toasts' library, loaded on first use) are not part of a first visit.
// Used by the bundle budget's test and the benches that report a first visit's weight.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const STATIC_IMPORT = /(?:^|[;}\s])import\s*(?:[\w$*{}\s,]+from\s*)?["'](\.\/[^"']+\.js)["']/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["'`](\.\/[^"'`]+\.js)["'`]\s*\)/g;

/** Site paths (`/assets/…`, `/hydrate.js`) of the scripts a first visit to `html` loads, in `clientDist`. */
export async function firstVisitScripts(clientDist: string, html: string): Promise<string[]> {
  const seen = new Set<string>();
  const visit = async (url: string, isEntry: boolean) => {
    if (seen.has(url)) return;
    seen.add(url);
    const code = await readFile(join(clientDist, url.replace(/^\//, '')), 'utf8');
    const dir = url.slice(0, url.lastIndexOf('/') + 1);
    const imports = [...code.matchAll(STATIC_IMPORT), ...(isEntry ? code.matchAll(DYNAMIC_IMPORT) : [])];
    for (const match of imports) await visit(dir + match[1]!.slice(2), false);
  };
  const entries = [
    ...html.matchAll(/<script[^>]+type="module"[^>]+src="([^"]+)"/g),
    ...html.matchAll(/<script[^>]+data-entry="([^"]+)"/g),
    ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g),
  ];
  for (const match of entries) await visit(match[1]!, true);
  // Classic scripts (the loader) count too; they import nothing.
  for (const match of html.matchAll(/<script(?![^>]*type="module")[^>]*\ssrc="([^"]+)"/g)) seen.add(match[1]!);
  return [...seen];
}
