// The recaps as the rest of the system sees them: validated once (content/validated-recaps.ts),
// then served in the orders and lookups the pages, feeds, e-mails and job need. Importing this
// module with an invalid recap throws, so neither the build nor the server can start on broken
// content.
import { LATEST_COUNT, summarize } from './page-data.ts';
import type { Recap, RecapSummary } from './schema.ts';
import { validatedRecaps } from './validated-recaps.ts';

/** Every recap, newest first. */
export const recaps: readonly Recap[] = validatedRecaps;

export { LATEST_COUNT, summarize };

/** Card data for every recap, newest first. */
export const recapSummaries: readonly RecapSummary[] = recaps.map(summarize);

/** The newest recaps, for the home page. */
export const latestRecaps: readonly RecapSummary[] = recapSummaries.slice(0, LATEST_COUNT);

const recapsByPath = new Map(recaps.map((recap) => [recap.path, recap]));

export function recapByPath(path: string): Recap | undefined {
  return recapsByPath.get(path);
}

/** Finds a recap by its date (`2025-07-14`) or its path (`/weekly-recap-july-14`, slash optional). */
export function findRecap(week: string): Recap | undefined {
  return recaps.find((recap) => recap.date === week) ?? recapsByPath.get(week.startsWith('/') ? week : `/${week}`);
}

/** The weeks before and after a recap, for previous/next links. */
export function neighboursOf(path: string): { previous?: RecapSummary; next?: RecapSummary } {
  const index = recapSummaries.findIndex((summary) => summary.path === path);
  if (index === -1) return {};
  return { next: recapSummaries[index - 1], previous: recapSummaries[index + 1] };
}

export type { Recap, RecapEntry, RecapLayout, RecapSummary } from './schema.ts';
