// Signups only from this site's own pages: a cross-site form post (someone else's page subscribing
// its visitors, or a bot page signing a victim up) is refused.
//
// The browser's Sec-Fetch-Site header decides when it is there (every current browser sends it):
// same-origin and none (typed, bookmarked) pass; same-site and cross-site are refused. Origin alone
// cannot decide: a page served with Referrer-Policy: no-referrer (our unsubscribe and other token
// pages, to keep the token out of referrers) makes Chromium send `Origin: null` for its own forms,
// which refused 'Subscribe again' on the unsubscribe page. Only when a client
// sends no Sec-Fetch-Site does Origin decide; clients that send neither (curl, server-side callers)
// pass, as they could set any header they like anyway.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createElement as h } from 'react';
import { sendError } from '../http/errors.ts';
import { page } from '../http/small-page.ts';

const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

export const CROSS_SITE_MESSAGE = 'Signups are accepted only from the Launched Weekly site itself.';
export const crossSiteText = {
  title: 'This form was sent from another site',
  body: `${CROSS_SITE_MESSAGE} Nothing was signed up. To subscribe, use the form on our own site.`,
  link: 'Go to the signup form',
} as const;

export function isCrossSite(req: Request, siteOrigin: string): boolean {
  const fetchSite = req.get('sec-fetch-site');
  if (fetchSite !== undefined) return !ALLOWED_FETCH_SITES.has(fetchSite.toLowerCase());
  const origin = req.get('origin');
  return origin !== undefined && origin !== siteOrigin && origin !== `${req.protocol}://${req.get('host')}`;
}

export function refuseCrossSite(siteUrl: string): RequestHandler {
  const siteOrigin = new URL(siteUrl).origin;
  const home = `${siteUrl.replace(/\/+$/, '')}/`;
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isCrossSite(req, siteOrigin)) return next();
    // A person who pressed a button on another site gets a page that says what happened, not JSON.
    if (req.is('application/x-www-form-urlencoded') || (req.accepts(['json', 'html']) === 'html' && !req.is('application/json'))) {
      const html = page({
        title: crossSiteText.title,
        home,
        children: [h('p', { key: 'body' }, crossSiteText.body), h('p', { key: 'link' }, h('a', { href: `${home}#email-signup` }, crossSiteText.link))],
      });
      res.status(403).set('Cache-Control', 'no-store').type('html').send(html);
      return;
    }
    sendError(res, 403, 'cross_site_request', CROSS_SITE_MESSAGE);
  };
}
