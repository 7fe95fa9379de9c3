// Scroll behaviour of the seed: the archive remembers where the reader was (in sessionStorage, so
// it lasts for the tab's life), every other page starts at the top.
export const ARCHIVE_PATH = '/archive';
const ARCHIVE_SCROLL_KEY = 'launched-weekly:archive-scroll';

/** The frame of a restore still under way (0: none). */
let restoring = 0;

/**
 * Scrolls the archive back to `top`, again on each frame until the page is tall enough to get
 * there (its cards may still be arriving: page data from a late request, images, fonts), for up to
 * 10 seconds (a slow phone or connection can take several to draw the cards), and never against
 * the reader: a wheel, touch or key stops it at once.
 */
export function restoreArchiveScroll(top: number): void {
  releaseArchiveScroll();
  cancelAnimationFrame(restoring);
  const until = performance.now() + 10_000;
  const stop = () => {
    cancelAnimationFrame(restoring);
    restoring = 0;
    for (const type of ['wheel', 'touchstart', 'keydown'] as const) window.removeEventListener(type, stop);
  };
  for (const type of ['wheel', 'touchstart', 'keydown'] as const) window.addEventListener(type, stop, { passive: true, once: true });
  const step = () => {
    window.scrollTo(0, top);
    if (Math.abs(window.scrollY - top) <= 1 || performance.now() > until) return stop();
    restoring = requestAnimationFrame(step);
  };
  step();
}

/**
 * The place at the moment the reader left, kept against what happens to the page after that: a
 * smooth scroll still running, a handler of the link scrolling to the top, the next page's layout.
 */
let held = false;

export function saveArchiveScroll(): void {
  // Scroll events can arrive just after a navigation away (the next page resetting to the top);
  // those positions are not the archive's. Nor are those of a page still too short for a restore.
  if (held || window.location.pathname !== ARCHIVE_PATH || restoring !== 0) return;
  try {
    sessionStorage.setItem(ARCHIVE_SCROLL_KEY, String(Math.round(window.scrollY)));
  } catch {
    // Storage can be disabled (private modes, quotas); the archive then simply starts at the top.
  }
}

/** The reader pressed a link away from the archive: this is the place to come back to. */
export function holdArchiveScroll(): void {
  saveArchiveScroll();
  held = true;
}

/** The reader is using the archive again (the link did not leave it, or they came back). */
export function releaseArchiveScroll(): void {
  held = false;
}

export function savedArchiveScroll(): number {
  try {
    const value = Number(sessionStorage.getItem(ARCHIVE_SCROLL_KEY));
    return Number.isFinite(value) && value > 0 ? value : 0;
  } catch {
    return 0;
  }
}

/**
 * Lays out the blocks a page leaves for later (`render-when-visible` in styles.css), so a scroll the
 * app makes to an element measures real heights, not estimates.
 */
export function renderWholePage(): void {
  document.documentElement.classList.add('render-all');
}

export function scrollToSignup(): void {
  const target = document.getElementById('email-signup');
  if (!target) return;
  renderWholePage();
  const reduceMotion = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  // Centred by hand: scrollIntoView would centre the box plus its scroll-margin, which is there
  // for no-JavaScript anchor jumps under the sticky bar.
  const box = target.getBoundingClientRect();
  const top = window.scrollY + box.top - Math.max(0, (window.innerHeight - box.height) / 2);
  window.scrollTo({ top, behavior: reduceMotion ? 'auto' : 'smooth' });
  // Move focus to the field so keyboard and screen-reader users land where sighted readers look.
  target.querySelector<HTMLInputElement>('input[type="email"]')?.focus({ preventScroll: true });
}
