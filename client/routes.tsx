// The route table, shared by the server (static handler) and the browser (data router). The 24
// recap routes are listed one by one from the content, as the seed's route table has them: no
// parameters, and an unknown path falls through to the 404 page.
import type { RouteObject } from 'react-router-dom';
import { formatWeekDate } from '../content/dates.ts';
import { site } from '../content/site.ts';
import { Layout } from './components/Layout.tsx';
import type { PageHead, RouteHandle } from './head.ts';
import { AboutPage } from './pages/AboutPage.tsx';
import { ArchivePage } from './pages/ArchivePage.tsx';
import { ErrorPage } from './pages/ErrorPage.tsx';
import { HomePage } from './pages/HomePage.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';
import { RecapPage } from './pages/RecapPage.tsx';
import { loadRecapPage, recapSummaries, type RecapPageData } from './recap-data.ts';

const page = (head: PageHead, status?: number): RouteHandle => ({ head: () => head, status });

const recapHandle: RouteHandle = {
  head: (data) => {
    const { recap } = data as RecapPageData;
    const top = recap.entries
      .slice(0, 3)
      .map((entry) => entry.name)
      .join(', ');
    return {
      title: site.recap.documentTitle(formatWeekDate(recap.date)),
      description: `${recap.headline}: the ten most upvoted launches on Launched by Lovable for the week of ${formatWeekDate(recap.date)}, led by ${top}.`,
      indexable: true,
    };
  },
};

export const routes: RouteObject[] = [
  {
    id: 'root',
    path: '/',
    Component: Layout,
    ErrorBoundary: ErrorPage,
    children: [
      {
        id: 'home',
        index: true,
        Component: HomePage,
        handle: page({ title: `${site.name}: Lovable's most upvoted launches, every Monday`, description: site.description, indexable: true }),
      },
      {
        id: 'archive',
        path: 'archive',
        Component: ArchivePage,
        handle: page({
          title: `${site.archive.heading} | ${site.name}`,
          description: `Every weekly Top 10 from ${site.name}, newest first: ${recapSummaries.length} weeks of the most upvoted launches on Launched by Lovable.`,
          indexable: true,
        }),
      },
      {
        id: 'about',
        path: 'about',
        Component: AboutPage,
        handle: page({
          title: `About | ${site.name}`,
          description: `Who writes ${site.name}, why, and how to get in touch.`,
          indexable: true,
        }),
      },
      ...recapSummaries.map(
        (summary): RouteObject => ({
          id: `recap-${summary.date}`,
          path: summary.path.slice(1),
          loader: () => loadRecapPage(summary.path),
          Component: RecapPage,
          handle: recapHandle,
        }),
      ),
      {
        id: 'not-found',
        path: '*',
        Component: NotFoundPage,
        handle: page({ title: `Page not found | ${site.name}`, description: site.notFound.text, indexable: false }, 404),
      },
    ],
  },
];
