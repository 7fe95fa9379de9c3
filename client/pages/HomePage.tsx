import { useLoaderData } from 'react-router-dom';
import type { HomeData } from '../../content/page-data.ts';
import { LAUNCH_PLATFORM, site, withCampaign } from '../../content/site.ts';
import logoUrl from '../assets/launched-logo.svg';
import { ExternalLink } from '../components/ExternalLink.tsx';
import { RecapCard } from '../components/RecapCard.tsx';
import { SignupForm } from '../components/SignupForm.tsx';
import { OriginLink } from '../origin.tsx';

export function HomePage() {
  const { latest } = useLoaderData() as HomeData;
  const { hero, home } = site;
  return (
    <div className="mx-auto max-w-5xl px-4">
      <section className="py-12 text-center sm:py-16">
        <h1 className="flex flex-wrap items-center justify-center gap-3 text-4xl font-extrabold tracking-tight sm:text-5xl">
          <span>{hero.title}</span>
          <img src={logoUrl} alt={hero.logoAlt} width={200} height={48} className="h-10 w-auto sm:h-12" />
        </h1>
        <p className="mx-auto mt-6 max-w-2xl text-xl text-ink sm:text-2xl">{hero.line}</p>
        <p className="mt-3 text-muted">
          <em>{hero.italicLine}</em>
        </p>
        <p className="mx-auto mt-6 max-w-2xl text-lg text-muted">
          {hero.mondayBefore}
          <ExternalLink href={withCampaign(LAUNCH_PLATFORM.url, { medium: 'site' })} className="font-semibold text-brand-dark underline underline-offset-2">
            {hero.mondayLink}
          </ExternalLink>
          {hero.mondayAfter}
        </p>
      </section>

      <div className="mx-auto max-w-2xl">
        <SignupForm />
      </div>

      <section aria-labelledby="latest-heading" className="mt-16">
        <h2 id="latest-heading" className="text-2xl font-bold">
          {home.latestHeading}
        </h2>
        <ul className="mt-6 grid gap-4 md:grid-cols-3">
          {latest.map((recap) => (
            <li key={recap.path}>
              <RecapCard recap={recap} />
            </li>
          ))}
        </ul>
        <p className="mt-6 text-center">
          <OriginLink to="/archive" className="inline-flex min-h-11 items-center rounded-lg border border-zinc-300 bg-white px-5 font-semibold hover:bg-zinc-50">
            {home.viewAll}
          </OriginLink>
        </p>
      </section>

      <section aria-labelledby="follow-heading" className="mt-16 rounded-2xl bg-white p-6 text-center shadow-sm">
        <h2 id="follow-heading" className="text-xl font-bold">
          {home.followHeading}
        </h2>
        <p className="mt-4 flex flex-wrap justify-center gap-3">
          <ExternalLink href={site.social.x} className="inline-flex min-h-11 items-center rounded-lg bg-ink px-5 font-semibold text-white">
            {home.followX}
          </ExternalLink>
          <ExternalLink href={site.social.linkedin} className="inline-flex min-h-11 items-center rounded-lg bg-[#0a66c2] px-5 font-semibold text-white">
            {home.followLinkedIn}
          </ExternalLink>
        </p>
      </section>
    </div>
  );
}
