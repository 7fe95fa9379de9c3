// Where the pages get their recaps. The card list (24 small summaries) is bundled; each week's
// full text is a chunk of its own, imported only when a reader navigates to it in the browser. On
// a first visit the server puts the page's data into the HTML, so no chunk is fetched at all.
import summaries from 'virtual:recap-summaries';
import type { Recap, RecapSummary } from '../content/schema.ts';

export const recapSummaries: readonly RecapSummary[] = summaries;

const weekModules = import.meta.glob<{ default: Recap }>('../content/recaps/2*.ts');

export interface RecapPageData {
  recap: Recap;
  previous?: RecapSummary;
  next?: RecapSummary;
}

export async function loadRecapPage(path: string): Promise<RecapPageData> {
  const index = recapSummaries.findIndex((summary) => summary.path === path);
  const summary = recapSummaries[index];
  const importWeek = summary && weekModules[`../content/recaps/${summary.date}.ts`];
  if (!importWeek) throw new Response('Not Found', { status: 404 });
  const { default: recap } = await importWeek();
  return { recap, next: recapSummaries[index - 1], previous: recapSummaries[index + 1] };
}
