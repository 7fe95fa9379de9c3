// The report's section on what readers clicked: each sent week's reach (sent, delivered, opened,
// clicks, click rate), its launches ranked by clicks, and the launches clicked most across the
// weeks shown. Rendered into the static report page (jobs/report/ReportPage.tsx).
import type { Engagement, WeekEngagement } from './engagement.ts';
import { Chart, number, percent } from './page-kit.tsx';


function WeeksTable({ weeks }: { weeks: readonly WeekEngagement[] }) {
  return (
    <table id="clicks-weeks">
      <thead>
        <tr>
          <th scope="col">recap</th>
          <th scope="col">sent</th>
          <th scope="col">delivered</th>
          <th scope="col">opened (approximate)</th>
          <th scope="col">clicks</th>
          <th scope="col">click rate</th>
        </tr>
      </thead>
      <tbody>
        {weeks.map((week) => (
          <tr key={week.recapDate} data-recap={week.recapDate}>
            <td>{week.label}</td>
            <td>{number(week.sent)}</td>
            <td>{number(week.delivered)}</td>
            <td>{number(week.opened)}</td>
            <td>{number(week.clicks)}</td>
            <td>{percent(week.clickRate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function WeekEntries({ week, open }: { week: WeekEngagement; open: boolean }) {
  return (
    <details open={open} data-recap={week.recapDate}>
      <summary>
        {week.label}: {number(week.clicks)} clicks ({number(week.pageClicks)} on the recap’s page)
      </summary>
      <table>
        <thead>
          <tr>
            <th scope="col">launch</th>
            <th scope="col">rank in the e-mail</th>
            <th scope="col">clicks</th>
          </tr>
        </thead>
        <tbody>
          {week.entries.map((entry) => (
            <tr key={entry.rank} data-rank={entry.rank}>
              <td>{entry.url ? <a href={entry.url}>{entry.name}</a> : entry.name}</td>
              <td>#{entry.rank}</td>
              <td>{number(entry.clicks)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

function TopLaunches({ engagement, svg }: { engagement: Engagement; svg: string | null }) {
  return (
    <>
      <h3 style={{ fontSize: 16, marginBottom: 0 }}>The launches readers clicked most</h3>
      <Chart svg={svg} label="The most clicked launches across the weeks shown" />
      {engagement.topLaunches.length > 0 ? (
        <table id="top-launches">
          <thead>
            <tr>
              <th scope="col">launch</th>
              <th scope="col">week</th>
              <th scope="col">clicks</th>
            </tr>
          </thead>
          <tbody>
            {engagement.topLaunches.map((launch) => (
              <tr key={`${launch.recapDate}-${launch.rank}`} data-recap={launch.recapDate} data-rank={launch.rank}>
                <td>{launch.name}</td>
                <td>{launch.label}</td>
                <td>{number(launch.clicks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

export function ClicksSection({ engagement, charts }: { engagement: Engagement; charts: { clicks: string | null; topLaunches: string | null } }) {
  return (
    <section id="clicks" aria-labelledby="clicks-title">
      <h2 id="clicks-title">What readers clicked</h2>
      <p className="lede">Each sent recap’s reach, and which of its launches readers went to see.</p>
      <Chart svg={charts.clicks} label="Clicks per recap" />
      <WeeksTable weeks={engagement.weeks} />
      {engagement.weeks.length === 0 ? <p className="muted">No recap has been sent yet.</p> : null}
      <p className="muted">Delivered and opened: counted from Resend’s webhook events, by the message’s recap tag; 0 while the webhook or the tracking is off.</p>
      <p className="muted" id="opened-note">
        Opened — {engagement.openedNote}
      </p>
      <p className="muted">Clicks — {engagement.clicksNote}</p>
      <h3 style={{ fontSize: 16, marginBottom: 0 }}>Each week’s launches by clicks</h3>
      {engagement.weeks.map((week, index) => (
        <WeekEntries key={week.recapDate} week={week} open={index === 0} />
      ))}
      <TopLaunches engagement={engagement} svg={charts.topLaunches} />
    </section>
  );
}
