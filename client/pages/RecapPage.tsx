import { useLoaderData } from 'react-router-dom';
import { formatShortDate, formatWeekDate } from '../../content/dates.ts';
import type { Recap, RecapEntry } from '../../content/schema.ts';
import { LAUNCH_PLATFORM, site, withCampaign, type CampaignPlacement } from '../../content/site.ts';
import { weekLabel } from '../../content/text.ts';
import { ExternalLink } from '../components/ExternalLink.tsx';
import { SignupForm } from '../components/SignupForm.tsx';
import type { RecapPageData } from '../../content/page-data.ts';
import { scrollToSignup } from '../scroll.ts';
import { OriginLink } from '../origin.tsx';

function Entry({ entry, recap, placement }: { entry: RecapEntry; recap: Recap; placement: CampaignPlacement }) {
  const upvotes = site.recap.upvotes(entry.upvotes);
  return (
    <li className="render-when-visible rounded-2xl border border-zinc-200 bg-white p-5 shadow-sm [contain-intrinsic-size:auto_23rem] sm:p-6 sm:[contain-intrinsic-size:auto_14rem]">
      <div className="flex items-start gap-4">
        <span className="shrink-0 rounded-lg bg-ink px-2.5 py-1 text-sm font-bold text-white" aria-hidden="true">
          #{entry.rank}
        </span>
        <div className="min-w-0 flex-1">
          <h3 className="text-lg font-bold leading-snug">
            <span className="sr-only">Number {entry.rank}: </span>
            <ExternalLink href={withCampaign(entry.url, placement)} className="text-ink underline decoration-brand underline-offset-4 hover:text-brand-dark">
              {entry.name}
            </ExternalLink>
          </h3>
          {recap.layout.upvotes === 'after-tagline' ? (
            <p className="mt-1 text-muted">
              {entry.tagline} — <span className="font-semibold text-ink">{upvotes}</span>
            </p>
          ) : (
            <>
              <p className="mt-1 text-muted">{entry.tagline}</p>
              <p className="mt-2 text-sm font-semibold text-ink">
                <span aria-hidden="true">▲ </span>
                {upvotes}
              </p>
            </>
          )}
          <div className="mt-4 rounded-xl bg-surface p-4">
            <p className="text-xs font-bold uppercase tracking-wide text-brand-dark">{site.recap.editorsNote}</p>
            <p className="mt-1 leading-relaxed">{entry.note}</p>
          </div>
        </div>
      </div>
    </li>
  );
}

function CallToAction() {
  return (
    <section aria-labelledby="cta-heading" className="rounded-2xl bg-ink p-8 text-center text-white">
      <h2 id="cta-heading" className="text-2xl font-bold">
        {site.callToAction.heading}
      </h2>
      <p className="mx-auto mt-2 max-w-xl text-zinc-200">{site.callToAction.text}</p>
      <a
        href="#email-signup"
        onClick={(event) => {
          event.preventDefault();
          scrollToSignup();
        }}
        className="mt-6 inline-flex min-h-11 items-center rounded-lg bg-white px-6 font-semibold text-ink hover:bg-zinc-100"
      >
        {site.callToAction.button}
      </a>
    </section>
  );
}

function SupportBanner({ placement }: { placement: CampaignPlacement }) {
  return (
    <aside aria-label="Support Launched Weekly" className="sticky bottom-0 z-30 border-t border-yellow-500 bg-banner">
      <p className="mx-auto flex max-w-4xl flex-wrap items-center justify-center gap-x-3 gap-y-1 px-4 py-3 text-center text-sm text-ink">
        <span>{site.recap.supportBanner}</span>
        <ExternalLink href={withCampaign(LAUNCH_PLATFORM.url, placement)} className="font-bold underline underline-offset-2">
          {site.recap.supportBannerLink}
        </ExternalLink>
      </p>
    </aside>
  );
}

/** `Jul 14` next to a week of the same year; the full date (`July 14, 2025`) across a new year. */
function neighbourLabel(date: string, current: string): string {
  return date.slice(0, 4) === current.slice(0, 4) ? formatShortDate(date) : formatWeekDate(date);
}

export function RecapPage() {
  const { recap, previous, next } = useLoaderData() as RecapPageData;
  const placement: CampaignPlacement = { medium: 'recap', week: recap.date };
  const endsWithSignup = recap.layout.ending === 'signup';
  return (
    <>
      <article className="mx-auto max-w-4xl px-4 py-10">
        {recap.layout.backLink && (
          <p className="mb-6">
            <OriginLink to="/" className="font-medium text-muted underline-offset-4 hover:underline">
              {site.recap.backToHome}
            </OriginLink>
          </p>
        )}
        <header>
          <p className="flex items-center gap-2 text-sm font-semibold text-marker">
            <span className="inline-block h-3 w-3 rounded-full bg-marker" aria-hidden="true" />
            Top 10
          </p>
          <h1 className="mt-2 text-3xl font-extrabold tracking-tight sm:text-4xl">{weekLabel(recap.date)}</h1>
          <p className="mt-2 text-xl font-semibold text-ink sm:text-2xl">{recap.headline}</p>
          <p className="mt-1 text-muted">{site.recap.subtitle}</p>
        </header>
        <div className="mt-6 rounded-2xl border border-zinc-200 bg-white p-6 text-lg leading-relaxed shadow-sm">
          <p>{recap.intro}</p>
        </div>
        {!endsWithSignup && (
          <div className="mt-8">
            <SignupForm />
          </div>
        )}
        <h2 className="sr-only">The Top 10</h2>
        <ol className="mt-8 space-y-4">
          {recap.entries.map((entry) => (
            <Entry key={entry.rank} entry={entry} recap={recap} placement={placement} />
          ))}
        </ol>
        <div className="mt-12">{endsWithSignup ? <SignupForm /> : <CallToAction />}</div>
        <nav aria-label="Other weeks" className="mt-10 flex flex-wrap justify-between gap-4 text-sm font-semibold">
          {previous ? (
            <OriginLink to={previous.path} className="text-brand-dark underline-offset-4 hover:underline">
              ← Week of {neighbourLabel(previous.date, recap.date)}
            </OriginLink>
          ) : (
            <span />
          )}
          {next && (
            <OriginLink to={next.path} className="text-brand-dark underline-offset-4 hover:underline">
              Week of {neighbourLabel(next.date, recap.date)} →
            </OriginLink>
          )}
        </nav>
      </article>
      {recap.layout.supportBanner && <SupportBanner placement={placement} />}
    </>
  );
}
