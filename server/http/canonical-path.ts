// One address per page. React Router matches paths case-insensitively and after decoding, so
// `/ABOUT`, `/%61bout` and `/about` would all render About; answered with 200, each would be a
// second copy of the page for crawlers (and, cached, could be served in place of another page).
// The server therefore serves a page only under its exact path and sends other spellings there.

/** The request's path exactly as sent (no decoding, no host parsing of `//x`), without the query. */
export function rawPathOf(originalUrl: string): string {
  const end = originalUrl.search(/[?#]/);
  return end === -1 ? originalUrl : originalUrl.slice(0, end);
}

/**
 * The known page a non-canonical spelling of `rawPath` stands for (decoded, lower-cased, empty
 * and trailing segments dropped), or undefined when it names no page. Exact known paths are not
 * passed here: they are served as they are.
 */
export function canonicalPageFor(rawPath: string, knownPaths: ReadonlySet<string>): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const candidate = `/${decoded.toLowerCase().split('/').filter(Boolean).join('/')}`;
  return candidate !== rawPath && knownPaths.has(candidate) ? candidate : undefined;
}
