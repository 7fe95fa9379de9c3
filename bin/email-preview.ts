// `npm run email:preview`: every recap's Monday e-mail as static files (HTML and plain text) in
// dist/email-preview, with an index page, to open in a browser or attach to a test mail. Offline:
// nothing is fetched and nothing is sent.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatWeekDate } from '../content/dates.ts';
import { recaps } from '../content/index.ts';
import { site } from '../content/site.ts';
import { renderDigestEmail, webUrlFor } from '../server/mail/templates/render-digest.ts';

const OUT_DIR = fileURLToPath(new URL('../dist/email-preview', import.meta.url));
const PREVIEW_SITE_URL = 'http://localhost:3000';
/** Gmail clips messages whose HTML is larger than about 102 KB. */
const GMAIL_CLIP_BYTES = 102 * 1024;

const escapeHtml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

async function main() {
  await rm(OUT_DIR, { recursive: true, force: true });
  await mkdir(OUT_DIR, { recursive: true });
  const rows: string[] = [];
  for (const recap of recaps) {
    const email = await renderDigestEmail({
      recap,
      webUrl: webUrlFor(recap, PREVIEW_SITE_URL),
      siteUrl: PREVIEW_SITE_URL,
      unsubscribeUrl: `${PREVIEW_SITE_URL}/unsubscribe?token=preview`,
    });
    await writeFile(join(OUT_DIR, `${recap.date}.html`), email.html);
    await writeFile(join(OUT_DIR, `${recap.date}.txt`), email.text);
    const kb = Buffer.byteLength(email.html) / 1024;
    const clipped = kb * 1024 > GMAIL_CLIP_BYTES ? ' <strong>over Gmail’s clipping size</strong>' : '';
    rows.push(
      `<li><a href="${recap.date}.html">${escapeHtml(email.subject)}</a> · <a href="${recap.date}.txt">plain text</a> · ${kb.toFixed(1)} KB${clipped}</li>`,
    );
  }
  const index = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(site.name)}: Monday e-mail previews</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.6;color:#18181b}a{color:#c0265c}li{margin:.4rem 0}</style>
</head>
<body>
<main>
<h1>${escapeHtml(site.name)}: Monday e-mail previews</h1>
<p>${recaps.length} recaps, newest first (${escapeHtml(formatWeekDate(recaps[0]!.date))} down to ${escapeHtml(formatWeekDate(recaps.at(-1)!.date))}). Links point at ${PREVIEW_SITE_URL}; the unsubscribe link carries a dummy token.</p>
<ul>
${rows.join('\n')}
</ul>
</main>
</body>
</html>
`;
  await writeFile(join(OUT_DIR, 'index.html'), index);
  console.error(`Wrote ${recaps.length} e-mails (HTML + text) and index.html to ${relative(process.cwd(), OUT_DIR) || OUT_DIR}`);
}

await main();
