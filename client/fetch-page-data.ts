// The browser's PageDataSource: on client-side navigation a page's loader data comes from the
// server as a small JSON request (server/site/routes/page-data-json.ts). On a first visit none of these run:
// the data is in the HTML.
import type { ArchiveData, HomeData, PageDataSource, RecapPageData } from '../content/page-data.ts';

async function getJson<T>(url: string, accept: readonly number[] = []): Promise<T | null> {
  const response = await fetch(url, { headers: { Accept: 'application/json' } });
  if (response.ok || accept.includes(response.status)) return (await response.json()) as T;
  if (response.status === 404) return null;
  // The route's error page says something went wrong; the status says what.
  throw new Response(response.statusText, { status: response.status });
}

async function required<T>(url: string, accept?: readonly number[]): Promise<T> {
  const data = await getJson<T>(url, accept);
  if (data === null) throw new Response('Not Found', { status: 404 });
  return data;
}

export const fetchedPageData: PageDataSource = {
  home: () => required<HomeData>('/data/home.json'),
  // A query the server refuses (too long) still comes with the page's message: 400 is data here.
  archive: (query) => required<ArchiveData>(query === null ? '/data/archive.json' : `/data/archive.json?q=${encodeURIComponent(query)}`, [400]),
  recap: (path) => getJson<RecapPageData>(`/data/recaps${path}.json`),
};
