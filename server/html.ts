// The document around the React app: head tags from the route's PageHead, and the split of the
// Vite-built template into the parts written before and after the streamed app.
import type { PageHead } from '../client/head.ts';
import { site } from '../content/site.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

export interface HeadContext {
  siteUrl: string;
  pathname: string;
}

export function renderHead(head: PageHead, { siteUrl, pathname }: HeadContext): string {
  const tags = [
    `<title>${escapeHtml(head.title)}</title>`,
    `<meta name="description" content="${escapeHtml(head.description)}" />`,
    `<link rel="alternate" type="application/rss+xml" title="${escapeHtml(site.name)}" href="${escapeHtml(`${siteUrl}/rss.xml`)}" />`,
  ];
  if (head.indexable) tags.push(`<link rel="canonical" href="${escapeHtml(siteUrl + pathname)}" />`);
  else tags.push('<meta name="robots" content="noindex" />');
  return tags.join('\n    ');
}

export interface TemplateParts {
  /** Up to the head placeholder. */
  beforeHead: string;
  /** From the head placeholder to the app placeholder. */
  beforeApp: string;
  /** From the app placeholder to the data placeholder. */
  beforeData: string;
  /** The rest of the document. */
  afterData: string;
}

export function splitTemplate(template: string): TemplateParts {
  const [beforeHead, rest1] = cut(template, '<!--app-head-->');
  const [beforeApp, rest2] = cut(rest1, '<!--app-html-->');
  const [beforeData, afterData] = cut(rest2, '<!--app-data-->');
  return { beforeHead, beforeApp, beforeData, afterData };
}

function cut(text: string, marker: string): [string, string] {
  const index = text.indexOf(marker);
  if (index === -1) throw new Error(`The HTML template has no ${marker} marker`);
  return [text.slice(0, index), text.slice(index + marker.length)];
}

export function dataScript(hydrationJson: string | null): string {
  return hydrationJson === null ? '' : `<script type="application/json" id="router-data">${hydrationJson}</script>`;
}
