import { site } from '../../content/site.ts';
import { scrollToSignup } from '../scroll.ts';
import { LogoMark } from './LogoMark.tsx';
import { OriginLink } from '../origin.tsx';

const scrollToTop = () => window.scrollTo({ top: 0 });
// The bar must fit a 320 px screen whatever font the reader's device substitutes (Debian's wide
// DejaVu Sans overflowed by 7 px): tight padding below `sm`, and the entries may wrap onto a
// second line rather than push the page sideways.
const itemClass =
  'block whitespace-nowrap rounded-md px-1.5 py-2 font-medium text-ink hover:bg-zinc-100 sm:px-3 aria-[current=page]:text-brand-dark';

export function TopBar() {
  return (
    <header className="sticky top-0 z-40 border-b border-zinc-200 bg-white/95 backdrop-blur">
      <nav aria-label="Main" className="mx-auto flex max-w-5xl flex-wrap items-center justify-between gap-x-2 px-2 py-2 sm:px-4">
        <OriginLink to="/" onClick={scrollToTop} className="flex shrink-0 items-center gap-2 rounded-md font-bold text-ink" aria-label={`${site.name} home`}>
          <LogoMark />
          <span className="hidden sm:inline">{site.name}</span>
        </OriginLink>
        <ul className="flex min-w-0 flex-wrap items-center justify-end text-sm">
          <li>
            <OriginLink to="/" onClick={scrollToTop} className={itemClass}>
              Home
            </OriginLink>
          </li>
          <li>
            <OriginLink to="/archive" className={itemClass}>
              Archives
            </OriginLink>
          </li>
          <li>
            <a
              href="#email-signup"
              className={itemClass}
              onClick={(event) => {
                event.preventDefault();
                scrollToSignup();
              }}
            >
              Subscribe
            </a>
          </li>
          <li>
            <OriginLink to="/about" onClick={scrollToTop} className={itemClass}>
              About
            </OriginLink>
          </li>
        </ul>
      </nav>
    </header>
  );
}
