// The document around the React app: head tags from the route's PageHead, and the split of the
// Vite-built template into the parts written before and after the streamed app.
import { SHARE_IMAGE_SIZE, shareImagePath, type JsonLd, type PageHead, type ShareImage } from '../../shared/head.ts';
import { site } from '../../content/site.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

export interface HeadContext {
  siteUrl: string;
  pathname: string;
  /** Keep an indexable page out of search results all the same (a preview of a coming week). */
  noindex?: boolean;
}

export function renderHead(head: PageHead, { siteUrl, pathname, noindex = false }: HeadContext): string {
  const tags = [
    `<title>${escapeHtml(head.title)}</title>`,
    `<meta name="description" content="${escapeHtml(head.description)}" />`,
    `<link rel="alternate" type="application/rss+xml" title="${escapeHtml(site.name)}" href="${escapeHtml(`${siteUrl}/rss.xml`)}" />`,
  ];
  if (head.indexable) {
    tags.push(`<link rel="canonical" href="${escapeHtml(siteUrl + pathname)}" />`);
    tags.push(...shareTags(head, siteUrl, siteUrl + pathname), ...(head.jsonLd?.(siteUrl) ?? []).map(jsonLdScript));
    if (noindex) tags.push('<meta name="robots" content="noindex" />');
  } else {
    tags.push('<meta name="robots" content="noindex" />');
  }
  return tags.join('\n    ');
}

const SITE_SHARE_IMAGE: ShareImage = { path: shareImagePath(), alt: `${site.name}: ${site.hero.line}` };

// The X handle is the last part of the profile address the footer links to.
const X_HANDLE = `@${new URL(site.social.x).pathname.split('/').filter(Boolean).at(-1)}`;

/** Open Graph and X card tags: what a link preview shows, with the canonical address as og:url. */
function shareTags(head: PageHead, siteUrl: string, canonicalUrl: string): string[] {
  const image = head.image ?? SITE_SHARE_IMAGE;
  const imageUrl = siteUrl + image.path;
  const property = (key: string, value: string | number) => `<meta property="${key}" content="${escapeHtml(String(value))}" />`;
  const name = (key: string, value: string) => `<meta name="${key}" content="${escapeHtml(value)}" />`;
  const type = head.type ?? 'website';
  return [
    property('og:type', type),
    property('og:site_name', site.name),
    property('og:title', head.title),
    property('og:description', head.description),
    property('og:url', canonicalUrl),
    property('og:locale', 'en_US'),
    property('og:image', imageUrl),
    property('og:image:type', 'image/png'),
    property('og:image:width', SHARE_IMAGE_SIZE.width),
    property('og:image:height', SHARE_IMAGE_SIZE.height),
    property('og:image:alt', image.alt),
    ...(type === 'article' && head.published ? [property('article:published_time', head.published)] : []),
    name('twitter:card', 'summary_large_image'),
    name('twitter:site', X_HANDLE),
    name('twitter:title', head.title),
    name('twitter:description', head.description),
    name('twitter:image', imageUrl),
    name('twitter:image:alt', image.alt),
  ];
}

/**
 * Structured data as a data block: the browser never runs it, so the script-src CSP does not
 * apply. Every `<` is written as its JSON escape so no text in it can close the script element.
 */
export function jsonLdScript(data: JsonLd): string {
  return `<script type="application/ld+json">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`;
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
