// The frame of the server's own small pages (unsubscribe, confirm, subscription, refusals): one
// self-contained HTML document with inline styles, no script, not indexed.
import type { RequestHandler, Response } from 'express';
import { createElement as h, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { site } from '../../content/site.ts';

const STYLE = `
*{box-sizing:border-box}
body{margin:0;padding:0 1rem;background:#fafaf9;color:#18181b;font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;line-height:1.6}
header,main,footer{max-width:36rem;margin:0 auto;padding:1.25rem 0}
header a{font-weight:800;color:#18181b;text-decoration:none}
main{background:#fff;border:1px solid #e4e4e7;border-radius:1rem;padding:2rem 1.5rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 .75rem}
p{margin:0 0 1rem}
button{font:inherit;font-weight:700;min-height:2.75rem;padding:.5rem 1.25rem;border-radius:.5rem;border:0;background:#18181b;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#18181b;border:2px solid #18181b}
button:focus-visible,a:focus-visible{outline:3px solid #c0265c;outline-offset:2px}
a{color:#c0265c}
footer{font-size:.95rem}
`;

export function page({ title, home, children }: { title: string; home: string; children: ReactNode }): string {
  const document = h(
    'html',
    { lang: 'en' },
    h(
      'head',
      null,
      h('meta', { charSet: 'utf-8' }),
      h('meta', { name: 'viewport', content: 'width=device-width, initial-scale=1' }),
      h('meta', { name: 'robots', content: 'noindex' }),
      h('title', null, `${title} · ${site.name}`),
      h('style', { dangerouslySetInnerHTML: { __html: STYLE } }),
    ),
    h(
      'body',
      null,
      h('header', null, h('a', { href: home }, site.name)),
      h('main', null, h('h1', null, title), children),
      h('footer', null, h('a', { href: home }, `← Back to ${site.name}`)),
    ),
  );
  return `<!doctype html>${renderToStaticMarkup(document)}`;
}

/** Sends such a page whose address carries a token: no caches, no referrer, no index. */
export function send(res: Response, status: number, html: string) {
  res
    .status(status)
    .set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Robots-Tag': 'noindex' })
    .type('html')
    .send(html);
}

/**
 * The first handler of every route whose address carries a token: whatever answers it (its page,
 * a form body's 413, a refusal), the token never leaves in a Referer header, not even to our own
 * origin's logs. Forms on these pages post with `Origin: null` for it; the signup's cross-site
 * check reads Sec-Fetch-Site (abuse/cross-site.ts), and the token routes' own forms need no Origin.
 */
export const noReferrer: RequestHandler = (_req, res, next) => {
  res.set('Referrer-Policy', 'no-referrer');
  next();
};
