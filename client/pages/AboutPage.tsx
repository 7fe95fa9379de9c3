import { LAUNCH_PLATFORM, site, withCampaign } from '../../content/site.ts';
import { ExternalLink } from '../components/ExternalLink.tsx';
import { SignupForm } from '../components/SignupForm.tsx';
import { OriginLink } from '../origin.tsx';

export function AboutPage() {
  const platformUrl = withCampaign(LAUNCH_PLATFORM.url, { medium: 'site' });
  return (
    <div className="mx-auto max-w-3xl px-4 py-12">
      <h1 className="text-3xl font-extrabold tracking-tight sm:text-4xl">{site.about.heading}</h1>
      <div className="mt-6 space-y-4 text-lg leading-relaxed text-ink">
        <p>
          Every week, makers put hundreds of apps built with Lovable in front of the community on{' '}
          <ExternalLink href={platformUrl} className="font-semibold text-brand-dark underline underline-offset-2">
            {LAUNCH_PLATFORM.name}
          </ExternalLink>
          . Most of them deserve a look; few people have time to look at all of them. Launched Weekly takes the ten that
          the community upvoted most and says, briefly and honestly, what each one does well and what it still needs.
        </p>
        <p>
          It is built and curated by one person: a developer who has shipped a few side projects of their own and
          likes reading other people's more. The ranking is the community's, untouched. The editor's notes are mine,
          and they are opinions, not ads: nobody pays to be in the Top 10 or to be spoken of kindly.
        </p>
        <p>
          The recap goes out every Monday by e-mail and lands here at the same time, so the{' '}
          <OriginLink to="/archive" className="font-semibold text-brand-dark underline underline-offset-2">
            archive
          </OriginLink>{' '}
          doubles as a record of what makers were building, week by week. And yes, the site itself was built with
          Lovable. It would have been strange otherwise.
        </p>
        <p>
          Spotted a launch I underrated, or a note that missed the point? I read every message:{' '}
          <a href={`mailto:${site.contactEmail}?subject=Feedback%20on%20Launched%20Weekly`} className="font-semibold text-brand-dark underline underline-offset-2">
            {site.about.feedbackLink}
          </a>{' '}
          ({site.contactEmail}), or find me on{' '}
          <ExternalLink href={site.social.x} className="font-semibold text-brand-dark underline underline-offset-2">
            X
          </ExternalLink>{' '}
          and{' '}
          <ExternalLink href={site.social.linkedin} className="font-semibold text-brand-dark underline underline-offset-2">
            LinkedIn
          </ExternalLink>
          .
        </p>
      </div>
      <div className="mt-12">
        <SignupForm />
      </div>
    </div>
  );
}
