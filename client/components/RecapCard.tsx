import type { RecapSummary } from '../../content/schema.ts';
import { site } from '../../content/site.ts';
import { weekLabel } from '../../content/text.ts';
import { OriginLink } from '../origin.tsx';

/** `headingLevel`: 3 under a section heading (home), 2 directly under the page's h1 (archive). */
export function RecapCard({ recap, headingLevel = 3 }: { recap: RecapSummary; headingLevel?: 2 | 3 }) {
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const week = weekLabel(recap.date);
  return (
    <article className="flex h-full flex-col rounded-2xl border border-zinc-200 bg-white p-5 shadow-sm">
      <p className="text-sm font-medium text-muted">{week}</p>
      <Heading className="mt-2 text-lg font-semibold leading-snug text-ink">{recap.title}</Heading>
      <p className="mt-1 text-sm text-muted">{recap.headline}</p>
      <OriginLink
        to={recap.path}
        aria-label={`${site.recap.readRecap}: ${week}`}
        className="mt-4 inline-flex w-fit items-center gap-1 font-semibold text-brand-dark underline-offset-4 hover:underline"
      >
        {site.recap.readRecap} <span aria-hidden="true">→</span>
      </OriginLink>
    </article>
  );
}
