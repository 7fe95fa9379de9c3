// The route table, shared by the server (static handler) and the browser (data router). Pages get
// their data from loaders, through a PageDataSource: the content itself on the server, JSON
// requests in the browser. So the table, and the bundle, are the same size for 24 weeks or 520:
// one route takes every `/weekly-recap-…` address and its loader says whether that week exists.
import type { RouteObject } from 'react-router-dom';
import { formatWeekDate } from '../content/dates.ts';
import { LAUNCH_PLATFORM, site } from '../content/site.ts';
import { weekTitle } from '../content/text.ts';
import { Layout } from './components/Layout.tsx';
import { SHARE_IMAGE_SIZE, shareImagePath, type JsonLd, type PageHead, type RouteHandle } from '../shared/head.ts';
import { AboutPage } from './pages/AboutPage.tsx';
import { ArchivePage } from './pages/ArchivePage.tsx';
import { ErrorPage } from './pages/ErrorPage.tsx';
import { HomePage } from './pages/HomePage.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';
import type { ArchiveData, PageDataSource, RecapPageData } from '../content/page-data.ts';
import { RecapRoute } from './pages/RecapRoute.tsx';

const page = (head: PageHead, status?: number): RouteHandle => ({ head: () => head, status });

// schema.org: the site is published by one Organization, described in full wherever it appears
// so each JSON-LD block stands on its own.
const SCHEMA = 'https://schema.org';

const organization = (siteUrl: string): JsonLd => ({
  '@type': 'Organization',
  '@id': `${siteUrl}/#organization`,
  name: site.name,
  url: `${siteUrl}/`,
  logo: { '@type': 'ImageObject', url: `${siteUrl}/icon-512.png`, width: 512, height: 512 },
  email: site.contactEmail,
  sameAs: [site.social.x, site.social.linkedin],
});

const websiteRef = (siteUrl: string): JsonLd => ({ '@type': 'WebSite', '@id': `${siteUrl}/#website`, url: `${siteUrl}/`, name: site.name });

const notFoundHead: PageHead = { title: `Page not found | ${site.name}`, description: site.notFound.text, indexable: false };

const recapHandle: RouteHandle = {
  status: (data) => (data ? 200 : 404),
  head: (data) => {
    if (!data) return notFoundHead;
    const { recap } = data as RecapPageData;
    const week = formatWeekDate(recap.date);
    const top = recap.entries.slice(0, 3);
    const description = `${recap.headline}: the ten most upvoted launches on Launched by Lovable for the week of ${week}, led by ${top.map((entry) => entry.name).join(', ')}.`;
    const image = {
      path: shareImagePath(recap.date),
      alt: `${weekTitle(recap)}. Top 3: ${top.map((entry) => `${entry.name} (${site.recap.upvotes(entry.upvotes)})`).join(', ')}.`,
    };
    return {
      title: site.recap.documentTitle(week),
      description,
      indexable: true,
      type: 'article',
      image,
      published: recap.date,
      jsonLd: (siteUrl) => {
        const url = `${siteUrl}${recap.path}`;
        return [
          {
            '@context': SCHEMA,
            '@type': 'Article',
            headline: recap.headline,
            alternativeHeadline: recap.title,
            description,
            datePublished: recap.date,
            dateModified: recap.date,
            url,
            mainEntityOfPage: url,
            image: { '@type': 'ImageObject', url: siteUrl + image.path, width: SHARE_IMAGE_SIZE.width, height: SHARE_IMAGE_SIZE.height },
            inLanguage: 'en',
            author: organization(siteUrl),
            publisher: organization(siteUrl),
            isPartOf: websiteRef(siteUrl),
          },
          {
            '@context': SCHEMA,
            '@type': 'ItemList',
            name: `Top 10 on ${LAUNCH_PLATFORM.name} for the week of ${week}`,
            url,
            numberOfItems: recap.entries.length,
            itemListOrder: `${SCHEMA}/ItemListOrderDescending`,
            itemListElement: recap.entries.map((entry) => ({ '@type': 'ListItem', position: entry.rank, name: entry.name, url: entry.url })),
          },
        ];
      },
    };
  },
};

const archiveDescription = (total: number) => `Every weekly Top 10 from ${site.name}, newest first: ${total} weeks of the most upvoted launches on Launched by Lovable.`;

const archiveHandle: RouteHandle = {
  status: (data) => ((data as ArchiveData).search?.status === 'too-long' ? 400 : 200),
  head: (data) => {
    const { total, years, search } = data as ArchiveData;
    const description = archiveDescription(total);
    // A page of search results is for the reader who asked, not for search engines.
    if (search) return { title: `Search: ${search.query.slice(0, 60)} | ${site.archive.heading} | ${site.name}`, description, indexable: false };
    const weeks = years.flatMap((year) => year.weeks);
    return {
      title: `${site.archive.heading} | ${site.name}`,
      description,
      indexable: true,
      jsonLd: (siteUrl) => [
        {
          '@context': SCHEMA,
          '@type': 'CollectionPage',
          name: site.archive.heading,
          description,
          url: `${siteUrl}/archive`,
          isPartOf: websiteRef(siteUrl),
          mainEntity: {
            '@type': 'ItemList',
            numberOfItems: weeks.length,
            itemListElement: weeks.map((summary, index) => ({ '@type': 'ListItem', position: index + 1, name: summary.headline, url: siteUrl + summary.path })),
          },
        },
      ],
    };
  },
};

/** Only addresses of this shape can be weeks; others are answered 404 without asking for data. */
const RECAP_SLUG = /^weekly-recap-[a-z]+-\d{1,2}(?:-\d{4})?$/;

export function createRoutes(data: PageDataSource): RouteObject[] {
  return [
    {
      id: 'root',
      path: '/',
      Component: Layout,
      ErrorBoundary: ErrorPage,
      children: [
        {
          id: 'home',
          index: true,
          loader: () => data.home(),
          Component: HomePage,
          handle: page({
            title: `${site.name}: Lovable's most upvoted launches, every Monday`,
            description: site.description,
            indexable: true,
            jsonLd: (siteUrl) => [
              { '@context': SCHEMA, ...websiteRef(siteUrl), description: site.description, inLanguage: 'en', publisher: organization(siteUrl) },
              { '@context': SCHEMA, ...organization(siteUrl) },
            ],
          }),
        },
        {
          id: 'archive',
          path: 'archive',
          loader: ({ request }) => data.archive(new URL(request.url).searchParams.get('q')),
          Component: ArchivePage,
          handle: archiveHandle,
        },
        {
          id: 'about',
          path: 'about',
          Component: AboutPage,
          handle: page({
            title: `About | ${site.name}`,
            description: `Who writes ${site.name}, why, and how to get in touch.`,
            indexable: true,
            jsonLd: (siteUrl) => [
              { '@context': SCHEMA, '@type': 'AboutPage', name: site.about.heading, url: `${siteUrl}/about`, isPartOf: websiteRef(siteUrl), mainEntity: organization(siteUrl) },
            ],
          }),
        },
        {
          id: 'recap',
          path: ':slug',
          loader: ({ params }) => (params.slug && RECAP_SLUG.test(params.slug) ? data.recap(`/${params.slug}`) : null),
          Component: RecapRoute,
          handle: recapHandle,
        },
        {
          id: 'not-found',
          path: '*',
          Component: NotFoundPage,
          handle: page(notFoundHead, 404),
        },
      ],
    },
  ];
}
