// GET /r/{code}: a reader's share link. It sends the visitor to the home page with the code in the
// address (`/?share=…`), which the site's links and forms carry to the signup form like any other
// origin (client/origin.tsx); a signup through it credits the code's owner once the new reader is
// active (supabase/migrations/…_signup_origins_and_referrals.sql). A code that was replaced, or
// never was, still leads to the site, only without the credit: a link someone posted never dies.
// An address that cannot be a share code is the site's ordinary 404.
import express, { type Router } from 'express';
import type { Logger } from '../../http/logger.ts';
import type { SiteStore } from '../../store/types.ts';
import { SHARE_CODE } from '../share-codes.ts';

export interface ShareLinkOptions {
  store: Pick<SiteStore, 'shareCodeKnown'>;
  logger: Logger;
}

export function shareLinkRouter({ store, logger }: ShareLinkOptions): Router {
  const router = express.Router();
  router.get('/r/:code', async (req, res, next) => {
    const code = req.params.code.toLowerCase();
    if (!SHARE_CODE.test(code)) return next();
    // Each visit is answered afresh: a replaced code stops crediting at once.
    res.set({ 'Cache-Control': 'no-store', 'X-Robots-Tag': 'noindex', 'Referrer-Policy': 'no-referrer' });
    let known = true;
    try {
      known = await store.shareCodeKnown(code);
    } catch (error) {
      // The signup checks the code again, so carrying it unchecked credits nobody by mistake.
      logger.error({ err: error }, 'share link could not reach the store');
    }
    res.redirect(302, known ? `/?share=${code}` : '/');
  });
  return router;
}
