import { site } from '../../content/site.ts';
import { SignupForm } from '../components/SignupForm.tsx';
import { OriginLink } from '../origin.tsx';

export function NotFoundPage() {
  return (
    <div className="mx-auto max-w-2xl px-4 py-20 text-center">
      <h1 className="text-3xl font-extrabold">{site.notFound.heading}</h1>
      <p className="mt-3 text-lg text-muted">{site.notFound.text}</p>
      <p className="mt-8 flex justify-center gap-3">
        <OriginLink to="/" className="inline-flex min-h-11 items-center rounded-lg bg-ink px-5 font-semibold text-white">
          Go to the home page
        </OriginLink>
        <OriginLink to="/archive" className="inline-flex min-h-11 items-center rounded-lg border border-zinc-300 bg-white px-5 font-semibold">
          Browse the archive
        </OriginLink>
      </p>
      <div className="mt-16 text-left">
        <SignupForm />
      </div>
    </div>
  );
}
