// Where a signup came from, as the landing visit's query named it (`ref`, `utm_source`,
// `utm_medium`, `utm_campaign`, and `share`: a reader's share code, which /r/{code} puts there),
// plus the page that visit landed on (`landing`), which the site adds on that first page so every
// link from it carries the visit's origin to the form without a cookie. Plain functions shared by the server (hidden fields and links it
// renders, the value it stores) and the browser (which copies the landing query into the form), so
// both keep exactly the same values. Anything outside the short token alphabet is dropped, not
// repaired: a query string is free text from anyone, and only values that can be neither markup
// nor a sentence may reach storage or the report.

/** Long enough for any campaign slug a platform generates; short enough to keep links tidy. */
export const MAX_ATTRIBUTION_LENGTH = 40;

const TOKEN = new RegExp(`^[a-z0-9._-]{1,${MAX_ATTRIBUTION_LENGTH}}$`);

/** The query parameters carried from the landing page to the form, in the order links carry them. */
export const ATTRIBUTION_PARAMETERS = ['ref', 'utm_source', 'utm_medium', 'utm_campaign', 'share', 'landing'] as const;

export type AttributionParameter = (typeof ATTRIBUTION_PARAMETERS)[number];

export type SignupAttribution = Partial<Record<AttributionParameter, string>>;

/** The value lower-cased and trimmed when it is a short token; undefined (dropped) otherwise. */
export function normalizeAttributionValue(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const value = raw.trim().toLowerCase();
  return TOKEN.test(value) ? value : undefined;
}

/**
 * The attribution a query holds, from URLSearchParams (the browser) or a parsed query object
 * (Express, where a repeated parameter is an array: its first value counts, as in the browser).
 */
export function attributionFromQuery(query: URLSearchParams | Record<string, unknown>): SignupAttribution {
  const attribution: SignupAttribution = {};
  for (const name of ATTRIBUTION_PARAMETERS) {
    const raw = query instanceof URLSearchParams ? query.get(name) : firstValue(query[name]);
    const value = normalizeAttributionValue(raw);
    if (value !== undefined) attribution[name] = value;
  }
  return attribution;
}

function firstValue(raw: unknown): unknown {
  return Array.isArray(raw) ? raw[0] : raw;
}

/**
 * The attribution as a query string to append to an internal link or a form's action ('' when
 * there is none, so a page rendered for a plain visit is byte for byte the page it was before).
 * The values are tokens already, so they need no escaping beyond what URLSearchParams does.
 */
export function attributionQuery(attribution: SignupAttribution): string {
  const params = new URLSearchParams();
  for (const name of ATTRIBUTION_PARAMETERS) {
    const value = normalizeAttributionValue(attribution[name]);
    if (value !== undefined) params.set(name, value);
  }
  const query = params.toString();
  return query === '' ? '' : `?${query}`;
}

/** The `landing` token of a page's path: `home` for `/`, the path without its slash otherwise. */
export function landingToken(pathname: string): string | undefined {
  return pathname === '/' ? 'home' : normalizeAttributionValue(pathname.replace(/^\//, ''));
}

/** The path a `landing` token names (the site checks that it is one of its pages). */
export function landingPath(token: string): string {
  return token === 'home' ? '/' : `/${token}`;
}

/**
 * The attribution every link and form of a page carries: the query's, and, on the page a visit
 * with an origin landed on, that page as `landing`. A visit with no origin carries nothing.
 */
export function carriedAttribution(query: URLSearchParams | Record<string, unknown>, pathname: string): SignupAttribution {
  const attribution = attributionFromQuery(query);
  if (Object.keys(attribution).length === 0 || attribution.landing !== undefined) return attribution;
  const landing = landingToken(pathname);
  return landing === undefined ? attribution : { ...attribution, landing };
}
