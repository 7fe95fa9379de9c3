// What each page's route loader returns, computed from the recaps. The browser bundle holds none
// of this: on a first visit the server puts it into the HTML, and on client-side navigation the
// browser fetches it as JSON (server/site/routes/page-data-json.ts), so the bundle's size does not grow
// with the number of weeks. Pure: it receives the recaps, newest first.
import type { Recap, RecapSummary } from './schema.ts';

/** How many recaps the home page shows (seed §9). */
export const LATEST_COUNT = 3;

/** Longest search query, in characters: longer than any name or headline worth typing. */
export const SEARCH_MAX_LENGTH = 100;
/** Results shown at most, so a one-letter query over ten years stays a short answer. */
export const SEARCH_MAX_WEEKS = 30;
export const SEARCH_MAX_ENTRIES = 60;

export interface HomeData {
  latest: RecapSummary[];
}

export interface ArchiveYear {
  year: string;
  weeks: RecapSummary[];
}

export interface SearchEntryHit {
  rank: number;
  name: string;
  tagline: string;
  week: RecapSummary;
}

export type ArchiveSearch =
  | { query: string; status: 'empty' | 'too-long'; message: string }
  | { query: string; status: 'ok'; weeks: RecapSummary[]; weekCount: number; entries: SearchEntryHit[]; entryCount: number };

export interface ArchiveData {
  /** How many weeks the archive holds. */
  total: number;
  /** Every week grouped by year, newest first; empty while a search is shown. */
  years: ArchiveYear[];
  /** Present when the address carries `?q=`. */
  search?: ArchiveSearch;
}

export interface RecapPageData {
  recap: Recap;
  previous?: RecapSummary;
  next?: RecapSummary;
}

/** Where route loaders get their data: content on the server, JSON requests in the browser. */
export interface PageDataSource {
  home(): Promise<HomeData>;
  archive(query: string | null): Promise<ArchiveData>;
  /** Null when no week has this path. */
  recap(path: string): Promise<RecapPageData | null>;
}

export function summarize(recap: Recap): RecapSummary {
  return { date: recap.date, path: recap.path, title: recap.title, headline: recap.headline };
}

/** Lower-cased, accents kept, runs of white space made one: what both query and text are compared as. */
function normalise(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

export function groupByYear(summaries: readonly RecapSummary[]): ArchiveYear[] {
  const years: ArchiveYear[] = [];
  for (const summary of summaries) {
    const year = summary.date.slice(0, 4);
    const last = years.at(-1);
    if (last?.year === year) last.weeks.push(summary);
    else years.push({ year, weeks: [summary] });
  }
  return years;
}

/** The page data of the whole site, from the validated recaps (newest first). */
export function createPageData(recapsNewestFirst: readonly Recap[]) {
  const summaries = recapsNewestFirst.map(summarize);
  const byPath = new Map(recapsNewestFirst.map((recap, index) => [recap.path, index]));
  const years = groupByYear(summaries);
  // The text each search compares against, prepared once.
  const searchable = recapsNewestFirst.map((recap, index) => ({
    week: summaries[index]!,
    weekText: normalise(`${recap.title} ${recap.headline}`),
    entries: recap.entries.map((entry) => ({ entry, text: normalise(`${entry.name} ${entry.tagline}`) })),
  }));

  /** The query is compared as plain text (String.includes), never read as a pattern. */
  function search(rawQuery: string): ArchiveSearch {
    const query = normalise(rawQuery);
    if (query === '') return { query: '', status: 'empty', message: 'Type a product name, or a word from a tagline or headline, to search the archive.' };
    if (query.length > SEARCH_MAX_LENGTH) {
      return { query: rawQuery.slice(0, SEARCH_MAX_LENGTH), status: 'too-long', message: `That search is too long: use at most ${SEARCH_MAX_LENGTH} characters.` };
    }
    const weeks: RecapSummary[] = [];
    const entries: SearchEntryHit[] = [];
    let weekCount = 0;
    let entryCount = 0;
    for (const item of searchable) {
      if (item.weekText.includes(query) && weekCount++ < SEARCH_MAX_WEEKS) weeks.push(item.week);
      for (const { entry, text } of item.entries) {
        if (text.includes(query) && entryCount++ < SEARCH_MAX_ENTRIES) {
          entries.push({ rank: entry.rank, name: entry.name, tagline: entry.tagline, week: item.week });
        }
      }
    }
    return { query, status: 'ok', weeks, weekCount, entries, entryCount };
  }

  const source: PageDataSource = {
    home: async () => ({ latest: summaries.slice(0, LATEST_COUNT) }),
    archive: async (query) => (query === null ? { total: summaries.length, years } : { total: summaries.length, years: [], search: search(query) }),
    recap: async (path) => {
      const index = byPath.get(path);
      if (index === undefined) return null;
      return { recap: recapsNewestFirst[index]!, next: summaries[index - 1], previous: summaries[index + 1] };
    },
  };
  return { source, summaries, search };
}
