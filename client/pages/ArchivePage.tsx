import { site } from '../../content/site.ts';
import { RecapCard } from '../components/RecapCard.tsx';
import { SignupForm } from '../components/SignupForm.tsx';
import { recapSummaries } from '../recap-data.ts';
import { saveArchiveScroll } from '../scroll.ts';

export function ArchivePage() {
  return (
    <div className="mx-auto max-w-5xl px-4 py-12">
      <h1 className="text-3xl font-extrabold tracking-tight sm:text-4xl">{site.archive.heading}</h1>
      <p className="mt-2 text-lg text-muted">{site.archive.subtitle}</p>
      <ul className="mt-8 grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
        {recapSummaries.map((recap) => (
          <li key={recap.path}>
            <RecapCard recap={recap} onOpen={saveArchiveScroll} headingLevel={2} />
          </li>
        ))}
      </ul>
      <div className="mx-auto mt-16 max-w-2xl">
        <SignupForm />
      </div>
    </div>
  );
}
