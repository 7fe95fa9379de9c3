// Previews of a coming week, behind a signed link (server/site/preview-token.ts, printed by
// `npm run preview -- WEEK`):
//   GET <the week's path>?preview=TOKEN   its page exactly as it will be at its publication time
//   GET /preview/email?preview=TOKEN      its Monday e-mail as it will be sent (&part=text: the text part)
// Both are kept out of every shared cache and every index. An altered link answers 403 and an
// expired one 410, each with a page that says what to do.
import express, { type Request, type Response, type Router } from 'express';
import { createElement as h } from 'react';
import { byDateNewestFirst, formatWeekDate } from '../../../content/dates.ts';
import { createPageData } from '../../../content/page-data.ts';
import { formatInstant, publicationInstant } from '../../../content/publication.ts';
import type { Recap } from '../../../content/schema.ts';
import { site } from '../../../content/site.ts';
import { escapeHtml } from '../html.ts';
import { verifyPreviewToken } from '../preview-token.ts';
import type { PublicSite } from '../public-site.ts';
import { pathsOf } from '../public-site.ts';
import type { Publishing } from '../public-weeks.ts';
import { createPageServer, type Renderer } from '../page-server.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../../subscribers/signed-links.ts';
import { noReferrer, page, send } from '../../http/small-page.ts';

export interface PreviewOptions {
  publicSite: PublicSite;
  publishing: Publishing;
  renderer: Renderer;
  siteUrl: string;
  /** UNSUBSCRIBE_SECRET: preview links are signed with a key derived from it. */
  secret: string;
  /** MAIL_FROM, as the e-mail will show it. */
  sender: string;
  onRenderError: (error: unknown) => void;
}

export const previewText = {
  invalidTitle: 'This preview link is not valid',
  invalidBody: 'It was changed or cut short on its way here. Make a new one with npm run preview -- WEEK (the week’s date, such as 2026-11-30).',
  expiredTitle: 'This preview link has expired',
  expiredBody: (week: string) => `Preview links work for 7 days. Make a new one with npm run preview -- ${week}.`,
  goneTitle: 'This week is no longer in the content',
  goneBody: (week: string) => `No week dated ${week} is in content/recaps any more, so there is nothing to preview.`,
  banner: (label: string, when: string, isPublic: boolean) => `Preview of ${label}: ${isPublic ? 'public since' : 'not public until'} ${when}. Only people with this link can see it.`,
  emailLink: 'See its e-mail as it will be sent',
  textPart: 'Its plain-text part',
} as const;

const BANNER_STYLE = 'margin:0;padding:.75rem 1rem;background:#18181b;color:#fff;font:600 15px/1.5 system-ui,sans-serif;text-align:center';

/** The weeks public at `week`'s publication time, and the week itself: the site as it will be then. */
function weeksAt(publishing: Publishing, week: Recap): Recap[] {
  const at = publicationInstant(week, publishing.timeZone).getTime();
  return [...publishing.recaps]
    .filter((recap) => recap === week || publicationInstant(recap, publishing.timeZone).getTime() <= at)
    .sort(byDateNewestFirst);
}

export function previewRouter(options: PreviewOptions): Router {
  const { publicSite, publishing, siteUrl, secret } = options;
  const home = `${siteUrl.replace(/\/+$/, '')}/`;
  const router = express.Router();

  /** The week a request's token opens, or null once an error page has been sent. */
  function weekOf(req: Request, res: Response): { week: Recap; token: string } | null {
    const token = req.query.preview;
    const check = verifyPreviewToken(token, publishing.clock(), secret);
    if (!check.ok) {
      const expired = check.reason === 'expired';
      const week = typeof token === 'string' ? token.slice(0, 10) : 'WEEK';
      send(
        res,
        expired ? 410 : 403,
        page({ home, title: expired ? previewText.expiredTitle : previewText.invalidTitle, children: h('p', null, expired ? previewText.expiredBody(week) : previewText.invalidBody) }),
      );
      return null;
    }
    const week = publicSite.site.weekOn(check.week);
    if (!week) {
      send(res, 404, page({ home, title: previewText.goneTitle, children: h('p', null, previewText.goneBody(check.week)) }));
      return null;
    }
    return { week, token: token as string };
  }

  router.get('/preview/email', noReferrer, async (req, res) => {
    const opened = weekOf(req, res);
    if (!opened) return;
    // The rendering the Monday job sends (server/mail/templates/render-digest.ts), with the unsubscribe link of a
    // copy sent to nobody: it leads to the real page and unsubscribes no one.
    // Loaded here, not at start: the e-mail renderer is a large body of JavaScript only previews need.
    const { prepareDigest } = await import('../../mail/templates/render-digest.ts');
    const prepared = await prepareDigest(opened.week, siteUrl);
    const copy = prepared.personalize(unsubscribeUrlFor(siteUrl, createUnsubscribeToken('preview', secret)));
    const message = { ...copy, from: options.sender };
    res.set({ 'Cache-Control': 'private, no-store', 'X-Robots-Tag': 'noindex', 'Referrer-Policy': 'no-referrer' });
    if (req.query.part === 'text') {
      res.type('text').send(`Subject: ${message.subject}\nFrom: ${message.from}\n\n${message.text}`);
      return;
    }
    // What a mail client shows above the message, above the message exactly as sent.
    const textHref = `/preview/email?preview=${encodeURIComponent(opened.token)}&part=text`;
    const header = `<p role="note" style="${BANNER_STYLE}">${escapeHtml(`Subject: ${message.subject} · From: ${message.from}`)} · <a href="${escapeHtml(textHref)}" style="color:#fde047">${previewText.textPart}</a></p>`;
    res.type('html').send(message.html.replace(/<body[^>]*>/, (body) => body + header));
  });

  router.get('/{*path}', async (req, res, next) => {
    if (req.query.preview === undefined) return next();
    // The address carries the token, whatever page answers it (a valid link opened on another page
    // falls through to that page): none may pass it on in a Referer header.
    res.set('Referrer-Policy', 'no-referrer');
    const opened = weekOf(req, res);
    if (!opened) return;
    const { week, token } = opened;
    // A valid link opened on another page: that page as everyone sees it.
    if (req.path !== week.path) return next();
    const weeks = weeksAt(publishing, week);
    const { source } = createPageData(weeks);
    const when = formatInstant(publicationInstant(week, publishing.timeZone), publishing.timeZone);
    const emailHref = `/preview/email?preview=${encodeURIComponent(token)}`;
    const banner = `<p role="note" style="${BANNER_STYLE}">${escapeHtml(previewText.banner(site.recap.weekOf(formatWeekDate(week.date)), when, publicSite.site.isPublicNow(week)))} <a href="${escapeHtml(emailHref)}" style="color:#fde047">${escapeHtml(previewText.emailLink)}</a></p>`;
    const servePage = createPageServer({
      renderer: options.renderer,
      siteUrl,
      knownPaths: pathsOf(weeks),
      pageData: source,
      onRenderError: options.onRenderError,
      preview: { banner },
    });
    await servePage(req, res);
  });
  return router;
}
