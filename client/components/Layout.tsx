import { useEffect, useLayoutEffect, useRef } from 'react';
import { Outlet, useLocation, useMatches } from 'react-router-dom';
import { headOf } from '../head.ts';
import { ARCHIVE_PATH, restoreArchiveScroll, saveArchiveScroll, savedArchiveScroll } from '../scroll.ts';
import { ToastHost } from '../toast.tsx';
import { Footer } from './Footer.tsx';
import { TopBar } from './TopBar.tsx';

/** Archive restores its saved position; a link to an anchor goes there; every other page starts at the top. */
function useScrollPolicy() {
  const location = useLocation();
  const previousPath = useRef<string | null>(null);

  useLayoutEffect(() => {
    const cameFrom = previousPath.current;
    previousPath.current = location.pathname;
    if (location.pathname === ARCHIVE_PATH) {
      // Arriving at the archive: where the reader left it (or the year a link names, if the tab
      // has no position yet). On the archive: a year from the jump list goes to that year; a new
      // search (only the query changed) leaves the page where it is.
      const year = () => document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView({ block: 'start' });
      if (cameFrom === ARCHIVE_PATH) {
        if (location.hash) year();
      } else {
        const saved = savedArchiveScroll();
        if (saved === 0 && location.hash) year();
        else restoreArchiveScroll(saved);
      }
    } else if (location.hash) {
      document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView({ block: 'center' });
    } else {
      window.scrollTo(0, 0);
    }
  }, [location.key, location.pathname, location.hash]);

  useEffect(() => {
    if (location.pathname !== ARCHIVE_PATH) return;
    let frame = 0;
    const onScroll = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(saveArchiveScroll);
    };
    window.addEventListener('scroll', onScroll, { passive: true });
    window.addEventListener('pagehide', saveArchiveScroll);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('scroll', onScroll);
      window.removeEventListener('pagehide', saveArchiveScroll);
    };
  }, [location.pathname]);
}

/** Keeps <title> in step with client-side navigation; the server writes the first one. */
function useDocumentTitle() {
  const matches = useMatches();
  const title = headOf(matches)?.head.title;
  useEffect(() => {
    if (title) document.title = title;
  }, [title]);
}

export function Layout() {
  useScrollPolicy();
  useDocumentTitle();
  return (
    <div className="flex min-h-screen flex-col bg-surface text-ink">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-3 focus:top-3 focus:z-50 focus:rounded focus:bg-white focus:p-2"
      >
        Skip to content
      </a>
      <TopBar />
      <main id="main" className="flex-1">
        <Outlet />
      </main>
      <Footer />
      <ToastHost />
    </div>
  );
}
