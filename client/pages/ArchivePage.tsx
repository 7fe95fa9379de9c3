import { useEffect, useRef, useState } from 'react';
import { Form, useLoaderData, useSubmit } from 'react-router-dom';
import type { ArchiveData, ArchiveSearch, ArchiveYear } from '../../content/page-data.ts';
import { site } from '../../content/site.ts';
import { pluralWord, weekLabel } from '../../content/text.ts';
import { RecapCard } from '../components/RecapCard.tsx';
import { SignupForm } from '../components/SignupForm.tsx';
import { OriginFields, OriginLink, useCarriedOrigin } from '../origin.tsx';
import { attributionQuery } from '../../content/signup-attribution.ts';

const yearId = (year: string) => `year-${year}`;
/** Typing waits this long for the next key before asking the server, so a word is one request, not one per letter. */
const TYPING_PAUSE_MS = 150;

/**
 * A plain GET form: without JavaScript it loads /archive?q=… and the server renders the results;
 * with it, typing updates the address (replacing the entry, so Back leaves the archive) and the
 * route's loader fetches the same results as JSON, drawn by the same components.
 */
function SearchForm({ query }: { query: string }) {
  const submit = useSubmit();
  const origin = attributionQuery(useCarriedOrigin());
  const [value, setValue] = useState(query);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return (
    <Form method="get" action="/archive" role="search" className="mt-8 flex flex-wrap items-end gap-3">
      <OriginFields />
      <div className="min-w-0 flex-1">
        <label htmlFor="archive-search" className="block text-sm font-semibold">
          Search the archive
        </label>
        <input
          id="archive-search"
          type="search"
          name="q"
          value={value}
          autoComplete="off"
          placeholder="A product, or a word from a tagline or headline"
          onChange={(event) => {
            const form = event.currentTarget.form;
            const next = event.currentTarget.value;
            setValue(next);
            clearTimeout(timer.current);
            timer.current = setTimeout(() => {
              // An emptied box shows every week again rather than the empty-search message.
              if (next.trim() === '') void submit(null, { action: `/archive${origin}`, method: 'get', replace: true });
              else void submit(form, { replace: true });
            }, TYPING_PAUSE_MS);
          }}
          className="mt-1 block min-h-11 w-full rounded-lg border border-zinc-300 bg-white px-3 text-base"
        />
      </div>
      <button type="submit" className="min-h-11 rounded-lg bg-ink px-5 font-semibold text-white">
        Search
      </button>
    </Form>
  );
}

function SearchResults({ search }: { search: ArchiveSearch }) {
  if (search.status !== 'ok') {
    return (
      <p role="status" className="mt-6 rounded-lg border border-zinc-200 bg-white p-4">
        {search.message}
      </p>
    );
  }
  const { query, weeks, weekCount, entries, entryCount } = search;
  const nothing = weekCount === 0 && entryCount === 0;
  return (
    <div className="mt-6">
      <p role="status" className="text-muted">
        {nothing
          ? `Nothing in the archive matches “${query}”.`
          : `${weekCount} ${pluralWord(weekCount, 'week')} and ${entryCount} ${pluralWord(entryCount, 'entry', 'entries')} match “${query}”.`}
      </p>
      {weeks.length > 0 && (
        <section aria-labelledby="matching-weeks" className="mt-6">
          <h2 id="matching-weeks" className="text-2xl font-bold">
            Matching weeks
          </h2>
          <ul className="mt-4 grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {weeks.map((recap) => (
              <li key={recap.path}>
                <RecapCard recap={recap} />
              </li>
            ))}
          </ul>
          {weekCount > weeks.length && <p className="mt-3 text-sm text-muted">The first {weeks.length} of {weekCount}: add a word to narrow the search.</p>}
        </section>
      )}
      {entries.length > 0 && (
        <section aria-labelledby="matching-entries" className="mt-10">
          <h2 id="matching-entries" className="text-2xl font-bold">
            Matching entries
          </h2>
          <ul className="mt-4 divide-y divide-zinc-200 rounded-2xl border border-zinc-200 bg-white">
            {entries.map((hit) => (
              <li key={`${hit.week.path}#${hit.rank}`} className="p-4">
                <p>
                  <span className="font-bold">#{hit.rank}</span> <span className="font-semibold">{hit.name}</span>
                  <span className="text-muted"> — {hit.tagline}</span>
                </p>
                <OriginLink to={hit.week.path} className="text-sm font-semibold text-brand-dark underline-offset-4 hover:underline">
                  {weekLabel(hit.week.date)}
                </OriginLink>
              </li>
            ))}
          </ul>
          {entryCount > entries.length && <p className="mt-3 text-sm text-muted">The first {entries.length} of {entryCount}: add a word to narrow the search.</p>}
        </section>
      )}
      <p className="mt-8">
        <OriginLink to="/archive" className="font-semibold text-brand-dark underline underline-offset-4">
          Show every week
        </OriginLink>
      </p>
    </div>
  );
}

function Years({ years }: { years: ArchiveYear[] }) {
  return (
    <>
      <nav aria-label="Years" className="mt-6">
        <ul className="flex flex-wrap gap-2">
          {years.map(({ year }) => (
            <li key={year}>
              <a href={`#${yearId(year)}`} className="inline-flex min-h-11 min-w-11 items-center justify-center rounded-lg border border-zinc-300 bg-white px-3 font-semibold">
                {year}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {years.map(({ year, weeks }) => (
        <section key={year} aria-labelledby={yearId(year)} className="mt-10">
          <h2 id={yearId(year)} className="scroll-mt-24 text-2xl font-bold">
            {year}
          </h2>
          <ul className="mt-4 grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {weeks.map((recap) => (
              <li key={recap.path}>
                <RecapCard recap={recap} />
              </li>
            ))}
          </ul>
        </section>
      ))}
    </>
  );
}

export function ArchivePage() {
  const { years, search } = useLoaderData() as ArchiveData;
  return (
    <div className="mx-auto max-w-5xl px-4 py-12">
      <h1 className="text-3xl font-extrabold tracking-tight sm:text-4xl">{site.archive.heading}</h1>
      <p className="mt-2 text-lg text-muted">{site.archive.subtitle}</p>
      <SearchForm query={search?.query ?? ''} />
      {search ? <SearchResults search={search} /> : <Years years={years} />}
      <div className="mx-auto mt-16 max-w-2xl">
        <SignupForm />
      </div>
    </div>
  );
}
