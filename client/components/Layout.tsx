import { useEffect, useLayoutEffect, useRef } from 'react';
import { Outlet, useLocation, useMatches } from 'react-router-dom';
import { headOf } from '../../shared/head.ts';
import { ARCHIVE_PATH, holdArchiveScroll, releaseArchiveScroll, renderWholePage, restoreArchiveScroll, saveArchiveScroll, savedArchiveScroll } from '../scroll.ts';
import { ToastHost } from '../toast.tsx';
import { CarryOrigin } from '../origin.tsx';
import { Footer } from './Footer.tsx';
import { TopBar } from './TopBar.tsx';

/** Whether a press of this link takes the reader off the archive, in this tab. */
function leavesArchive(event: MouseEvent): boolean {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return false;
  const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
  if (!(link instanceof HTMLAnchorElement) || (link.target && link.target !== '_self')) return false;
  return link.origin !== window.location.origin || link.pathname !== ARCHIVE_PATH;
}

/**
 * Where a page starts. The first render (hydration) leaves the page where it is: the reader may
 * already have scrolled the server's HTML, and the archive restores its saved place only if not.
 * After that, the archive restores its place, a link to an anchor goes there, and every other page
 * starts at the top.
 */
function useScrollPolicy() {
  const location = useLocation();
  const previousPath = useRef<string | null>(null);

  useLayoutEffect(() => {
    const cameFrom = previousPath.current;
    previousPath.current = location.pathname;
    const anchor = (block: ScrollLogicalPosition) => {
      renderWholePage();
      document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView({ block });
    };
    if (location.pathname === ARCHIVE_PATH) {
      // Arriving at the archive: where the reader left it (or the year a link names, if the tab
      // has no position yet). On the archive: a year from the jump list goes to that year; a new
      // search (only the query changed) leaves the page where it is.
      if (cameFrom === ARCHIVE_PATH) {
        if (location.hash) anchor('start');
        return;
      }
      if (cameFrom === null && window.scrollY > 0) return;
      const saved = savedArchiveScroll();
      if (saved === 0 && location.hash) anchor('start');
      else restoreArchiveScroll(saved);
    } else if (location.hash) {
      anchor('center');
    } else if (cameFrom !== null) {
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
    // In the capture phase, so the place is taken before any handler of the link moves the page.
    const onClick = (event: MouseEvent) => {
      if (leavesArchive(event)) holdArchiveScroll();
    };
    const readerInput = ['wheel', 'touchstart', 'keydown'] as const;
    window.addEventListener('scroll', onScroll, { passive: true });
    window.addEventListener('click', onClick, { capture: true });
    for (const type of readerInput) window.addEventListener(type, releaseArchiveScroll, { passive: true });
    window.addEventListener('pagehide', saveArchiveScroll);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('scroll', onScroll);
      window.removeEventListener('click', onClick, { capture: true });
      for (const type of readerInput) window.removeEventListener(type, releaseArchiveScroll);
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
    <CarryOrigin>
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
    </CarryOrigin>
  );
}
