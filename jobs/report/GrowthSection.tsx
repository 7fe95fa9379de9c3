// Where new readers come from: by week, source and landing page; the recap pages that brought the
// most; the share links' part and the referrers with the most credits, their addresses masked.
// Every value shown was normalised before it was stored (content/signup-attribution.ts), and React
// escapes it again here.
import { number, percent } from './page-kit.tsx';
import type { Growth } from './gather.ts';

function Table({ head, rows }: { head: string[]; rows: (string | number)[][] }) {
  return (
    <table>
      <thead>
        <tr>
          {head.map((title) => (
            <th scope="col" key={title}>
              {title}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => (
          <tr key={index}>
            {row.map((cell, column) => (
              <td key={column}>{typeof cell === 'number' ? number(cell) : cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function GrowthSection({ growth }: { growth: Growth }) {
  const { weeks, pages, readers, referred, topReferrers, weeksCovered } = growth;
  return (
    <section id="growth" aria-labelledby="growth-title">
      <h2 id="growth-title">Where new readers come from</h2>
      <p className="lede">
        Readers who became active (confirmed, in double opt-in) in the last {weeksCovered} weeks, by the origin their first visit carried to the form: a
        reader&apos;s share link, the landing address&apos;s utm_source or ref, an import, or none (direct); and the page that visit landed on.
      </p>
      <p id="growth-share">
        {number(readers)} new active readers; {number(referred)} came through a reader&apos;s share link ({percent(readers > 0 ? referred / readers : 0)}).
      </p>
      {weeks.length === 0 ? (
        <p className="muted">No new active readers in these weeks.</p>
      ) : (
        <Table head={['week of', 'source', 'landing page', 'new active readers']} rows={weeks.map((row) => [row.week, row.source, row.page ?? '(unknown)', row.readers])} />
      )}
      <h3>Recap pages that brought the most readers</h3>
      {pages.length === 0 ? <p className="muted">No reader has come through a recap page yet.</p> : <Table head={['recap page', 'new active readers']} rows={pages.map((row) => [row.page, row.readers])} />}
      <h3>Top referrers</h3>
      {topReferrers.length === 0 ? (
        <p className="muted">No share link has brought a reader yet.</p>
      ) : (
        <Table head={['referrer', 'readers credited']} rows={topReferrers.map((row) => [row.masked, row.referrals])} />
      )}
    </section>
  );
}
