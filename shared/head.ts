// What each route puts in the document head. Routes carry a `handle.head` function; the server
// reads it to write <title>, description and canonical link, and the browser reads it to update
// the title after client-side navigation.
import { ATTRIBUTION_PARAMETERS } from '../content/signup-attribution.ts';

export interface PageHead {
  title: string;
  description: string;
  /** Whether search engines should index the page (false for 404s and errors). */
  indexable: boolean;
  /** Open Graph type: a recap is an article; every other page is the website (the default). */
  type?: 'website' | 'article';
  /** The card shown where the page is shared; the site's own card when absent. */
  image?: ShareImage;
  /** The day an article was published, `YYYY-MM-DD`. */
  published?: string;
  /** schema.org objects for the page, each written as one JSON-LD block; URLs need the site's address. */
  jsonLd?: (siteUrl: string) => readonly JsonLd[];
}

export type JsonLd = Record<string, unknown>;

export interface ShareImage {
  /** Site-relative path of the PNG that scripts/share-images.ts writes at build time. */
  path: string;
  alt: string;
}

/** The size Open Graph and X recommend for large cards; every share image is made at this size. */
export const SHARE_IMAGE_SIZE = { width: 1200, height: 630 } as const;

/** `/share/2025-07-14.png` for a recap, `/share/site.png` for every other page. */
export function shareImagePath(recapDate?: string): string {
  return `/share/${recapDate ?? 'site'}.png`;
}

export interface RouteHandle {
  head: (data: unknown) => PageHead;
  /** HTTP status the server answers with when this route is the deepest match (from its data, when a function). */
  status?: number | ((data: unknown) => number);
}

/** Reads the deepest matched route's head; takes React Router's matches on either side. */
export function headOf(matches: readonly { handle: unknown; data: unknown }[]): { head: PageHead; status: number } | null {
  const leaf = matches.at(-1);
  const handle = leaf?.handle as RouteHandle | undefined;
  if (!leaf || !handle) return null;
  const status = typeof handle.status === 'function' ? handle.status(leaf.data) : handle.status;
  return { head: handle.head(leaf.data), status: status ?? 200 };
}

/**
 * The query parameters that change what a page shows, so a page with one is rendered per request
 * rather than served from the page cache: the no-JavaScript signup outcome, the archive's search,
 * and a visit's origin, which the page's links and forms carry on (client/origin.tsx).
 */
export const DYNAMIC_QUERY = ['signup', 'q', ...ATTRIBUTION_PARAMETERS] as const;
