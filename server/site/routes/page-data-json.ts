// The route data the browser fetches on client-side navigation: the same objects the server's
// loaders put into the HTML on a first visit (content/page-data.ts), as JSON. Home and archive get
// their cards here, so the browser bundle holds no week's title, headline or text.
//   GET /data/home.json                 the newest weeks' cards
//   GET /data/archive.json[?q=…]        every week by year, or the results of a search
//   GET /data/recaps/<slug>.json        one week's text and its neighbours
import express, { type Response, type Router } from 'express';
import type { PageDataSource } from '../../../content/page-data.ts';
import { sendError } from '../../http/errors.ts';

function sendData(res: Response, status: number, data: unknown) {
  // Always revalidated (ETag): the data changes with each weekly deploy and publication.
  res.status(status).set('Cache-Control', 'no-cache').json(data);
}

/** `current` gives the data of the weeks public at the time of the request (server/site/public-weeks.ts). */
export function pageDataRouter(current: () => PageDataSource): Router {
  const router = express.Router();
  router.get('/data/home.json', async (_req, res) => {
    sendData(res, 200, await current().home());
  });
  router.get('/data/archive.json', async (req, res) => {
    const { q } = req.query;
    if (q !== undefined && typeof q !== 'string') {
      sendError(res, 400, 'invalid_query', 'Search with one query: /data/archive.json?q=word.');
      return;
    }
    const data = await current().archive(q ?? null);
    sendData(res, data.search?.status === 'too-long' ? 400 : 200, data);
  });
  router.get('/data/recaps/:slug.json', async (req, res) => {
    const data = await current().recap(`/${req.params.slug}`);
    if (!data) {
      sendError(res, 404, 'not_found', 'There is no recap at this address.');
      return;
    }
    sendData(res, 200, data);
  });
  router.all('/data/{*rest}', (_req, res) => sendError(res, 404, 'not_found', 'There is no such data.'));
  return router;
}
