import { useLoaderData } from 'react-router-dom';
import type { RecapPageData } from '../../content/page-data.ts';
import { NotFoundPage } from './NotFoundPage.tsx';
import { RecapPage } from './RecapPage.tsx';

/** A `/weekly-recap-…` address: the week's page, or the 404 page when no week has it. */
export function RecapRoute() {
  const data = useLoaderData() as RecapPageData | null;
  return data ? <RecapPage /> : <NotFoundPage />;
}
