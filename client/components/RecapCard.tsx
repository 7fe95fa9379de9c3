import { Link } from 'react-router-dom';
import { formatWeekDate } from '../../content/dates.ts';
import type { RecapSummary } from '../../content/schema.ts';
import { site } from '../../content/site.ts';

export function RecapCard({ recap, onOpen }: { recap: RecapSummary; onOpen?: () => void }) {
  const week = site.recap.weekOf(formatWeekDate(recap.date));
  return (
    <article className="flex h-full flex-col rounded-2xl border border-zinc-200 bg-white p-5 shadow-sm">
      <p className="text-sm font-medium text-muted">{week}</p>
      <h3 className="mt-2 text-lg font-semibold leading-snug text-ink">{recap.title}</h3>
      <p className="mt-1 text-sm text-muted">{recap.headline}</p>
      <Link
        to={recap.path}
        onClick={onOpen}
        aria-label={`${site.recap.readRecap}: ${week}`}
        className="mt-4 inline-flex w-fit items-center gap-1 font-semibold text-brand-dark underline-offset-4 hover:underline"
      >
        {site.recap.readRecap} <span aria-hidden="true">→</span>
      </Link>
    </article>
  );
}
