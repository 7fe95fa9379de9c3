import { site } from '../../content/site.ts';
import { OriginLink } from '../origin.tsx';

export function Footer() {
  return (
    <footer className="mt-16 border-t border-zinc-200 bg-white">
      <div className="mx-auto flex max-w-5xl flex-col gap-3 px-4 py-8 text-sm text-muted sm:flex-row sm:items-center sm:justify-between">
        <p>
          {site.footerCredit.before}
          <a href={site.footerCredit.toolUrl} className="font-medium text-ink underline underline-offset-2">
            {site.footerCredit.tool}
          </a>
        </p>
        <ul className="flex flex-wrap gap-4">
          <li>
            <OriginLink to="/archive" className="underline underline-offset-2">
              Archive
            </OriginLink>
          </li>
          <li>
            <OriginLink to="/about" className="underline underline-offset-2">
              About
            </OriginLink>
          </li>
          <li>
            <a href="/rss.xml" className="underline underline-offset-2">
              RSS feed
            </a>
          </li>
        </ul>
      </div>
    </footer>
  );
}
