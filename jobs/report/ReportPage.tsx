// The report as one static HTML page: React rendered to markup once, the charts' SVG inline, the
// styles in the head. No script, no font, image or stylesheet from anywhere: the file reads the
// same opened from disk, mailed as an attachment or offline.
import { senderHoldWords } from '../../server/mail/sender-refusal.ts';
import type { ReactNode } from 'react';
import type { CheckResult } from '../../server/mail/digest/presend-checks.ts';
import { unknownPart } from '../../server/mail/digest/run-report.ts';
import type { Charts } from './charts.ts';
import { ClicksSection } from './ClicksSection.tsx';
import { GrowthSection } from './GrowthSection.tsx';
import { Chart, number, percent } from './page-kit.tsx';
import { RATE_LINE, STATES, type ReportData, type SendRow } from './gather.ts';
import type { SetupCheck } from './setup-checks.ts';

const STYLES = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;margin:0;background:#f6f7f9}
main{max-width:760px;margin:0 auto;padding:24px 16px 48px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 6px}h3{font-size:16px;margin:18px 0 4px}
section{background:#fff;border:1px solid #e3e6ea;border-radius:8px;padding:16px 18px;margin-top:18px}
.lede{color:#555;margin:0 0 8px}.muted{color:#666;font-size:13px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-top:12px}
.card{flex:1 1 90px;background:#fff;border:1px solid #e3e6ea;border-radius:8px;padding:10px 12px}
.card b{display:block;font-size:24px}
table{border-collapse:collapse;width:100%;margin-top:10px;font-size:14px}
th,td{text-align:right;padding:4px 6px;border-bottom:1px solid #eceff1}th:first-child,td:first-child{text-align:left}
.over{color:#c62828;font-weight:700}.advice{border-left:4px solid #c62828;background:#fdecea;padding:8px 12px;margin-top:10px}
.chart svg{max-width:100%;height:auto}
.check-pass::before{content:"✓ ";color:#2e7d32}.check-warn::before{content:"! ";color:#ef6c00}.check-fail::before{content:"✗ ";color:#c62828}
ul.checks{padding-left:0;list-style:none}
details{margin-top:10px}summary{cursor:pointer;font-weight:600}
`;

const when = (date: Date, timeZone: string) =>
  `${date.toLocaleString('en-GB', { timeZone, weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' })} (${timeZone})`;

function Section({ id, title, lede, children }: { id: string; title: string; lede: string; children: ReactNode }) {
  return (
    <section id={id} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p className="lede">{lede}</p>
      {children}
    </section>
  );
}

/** While the provider refuses the sender: since when, why in words, and what ends it. */
function SenderHoldNotice({ hold }: { hold: NonNullable<ReportData['outbox']['hold']> }) {
  const words = senderHoldWords(hold.cause);
  return (
    <p id="mail-held" className="over">
      <b>Held:</b> every e-mail waits, none is failed, since {hold.since.toISOString().slice(0, 16).replace('T', ' ')} UTC, because {words.cause} (last refusal{' '}
      {hold.lastRefusedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC: {hold.reason}). {words.remedy}
    </p>
  );
}

function OutboxTable({ outbox }: { outbox: ReportData['outbox'] }) {
  return (
    <>
      {outbox.hold ? <SenderHoldNotice hold={outbox.hold} /> : null}
      <p>
        <b>{number(outbox.queued)}</b> queued · <b>{number(outbox.retrying)}</b> retrying · <b className={outbox.failed > 0 ? 'over' : undefined}>{number(outbox.failed)}</b> failed ·{' '}
        {number(outbox.sent)} sent{unknownPart(outbox.unknown)}{outbox.oldestOpenAt ? ` · the oldest waiting since ${outbox.oldestOpenAt.toISOString().slice(0, 16).replace('T', ' ')} UTC` : ''}
      </p>
      {outbox.failures.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">message</th>
              <th scope="col">kind</th>
              <th scope="col">state</th>
              <th scope="col">queued (UTC)</th>
              <th scope="col">tries</th>
              <th scope="col">last error</th>
            </tr>
          </thead>
          <tbody>
            {outbox.failures.map((f) => (
              <tr key={f.id}>
                <td>#{f.id}</td>
                <td>{f.kind}</td>
                <td>{f.state}</td>
                <td>{f.createdAt.toISOString().slice(0, 16).replace('T', ' ')}</td>
                <td>{f.attempts}</td>
                <td>{f.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

function RateCell({ count, rate }: { count: number; rate: number }) {
  return (
    <td className={rate > RATE_LINE ? 'over' : undefined}>
      {number(count)} ({percent(rate)})
    </td>
  );
}

function adviceFor(send: SendRow): string[] {
  const advice: string[] = [];
  if (send.complaintRate > RATE_LINE) {
    advice.push(
      `${send.label}: complaints at ${percent(send.complaintRate)}, above the 0.3 % Gmail and Yahoo allow. Complainers are already off the list; make sure every address asked for the newsletter (SIGNUP_CONFIRMATION=double), keep the unsubscribe link easy to find, and look at the top source pages for one that brings unwilling signups.`,
    );
  }
  if (send.bounceRate > RATE_LINE) {
    advice.push(
      `${send.label}: bounces at ${percent(send.bounceRate)}, above the 0.3 % line. Bounced addresses are already off the list; a rising rate means bad addresses are coming in: turn on SIGNUP_CONFIRMATION=double and check the top source pages for bot signups.`,
    );
  }
  return advice;
}

function Checks({ checks }: { checks: readonly (CheckResult | SetupCheck)[] }) {
  return (
    <ul className="checks">
      {checks.map((check) => (
        <li key={check.id} className={`check-${check.status}`}>
          <b>{check.title}</b> ({check.status}): {check.detail}
          {check.fix ? ` Fix: ${check.fix}` : ''}
        </li>
      ))}
    </ul>
  );
}

function SubscribersSection({ weeks, svg }: { weeks: ReportData['snapshot']['weeks']; svg: string }) {
  return (
    <Section id="subscribers" title="Subscribers over time" lede="Everyone on the list at the end of each week, by state (the last 52 weeks).">
      <Chart svg={svg} label="Subscribers per week by state" />
      <table>
        <caption className="muted">The last {weeks.length} weeks, newest first</caption>
        <thead>
          <tr>
            <th scope="col">week starting</th>
            {STATES.map((state) => (
              <th scope="col" key={state}>
                {state}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {weeks.map((week) => (
            <tr key={week.week}>
              <td>{week.week}</td>
              {STATES.map((state) => (
                <td key={state}>{number(week.states[state] ?? 0)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

function SourcesSection({ sources, svg }: { sources: ReportData['snapshot']['sources']; svg: string | null }) {
  return (
    <Section id="sources" title="Top source pages" lede="The pages the signup form was sent from, all time, top ten.">
      <Chart svg={svg} label="Signups by source page" />
      <table>
        <thead>
          <tr>
            <th scope="col">page</th>
            <th scope="col">signups</th>
          </tr>
        </thead>
        <tbody>
          {sources.map((source) => (
            <tr key={source.source}>
              <td>{source.source}</td>
              <td>{number(source.signups)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

function SendsSection({ sends, svg }: { sends: ReportData['sends']; svg: string | null }) {
  const advice = sends.flatMap(adviceFor);
  return (
    <Section
      id="sends"
      title="Every send of every recap"
      lede="Messages the provider accepted, and the bounces and complaints its webhook reported for them. Gmail and Yahoo expect complaints under 0.3 %; a rate above that line is red."
    >
      <Chart svg={svg} label="Bounce and complaint rate per recap, with the 0.3 % line" />
      <table>
        <thead>
          <tr>
            <th scope="col">recap</th>
            <th scope="col">sent</th>
            <th scope="col">failed</th>
            <th scope="col">unknown</th>
            <th scope="col">skipped</th>
            <th scope="col">bounced</th>
            <th scope="col">complained</th>
          </tr>
        </thead>
        <tbody>
          {sends.map((send) => (
            <tr key={send.recapDate} data-recap={send.recapDate}>
              <td>
                {send.label}
                <br />
                <span className="muted">{send.headline ?? 'not in content/recaps'}</span>
              </td>
              <td>{number(send.sent)}</td>
              <td className={send.failed > 0 ? 'over' : undefined}>{number(send.failed)}</td>
              <td className={send.unknown > 0 ? 'over' : undefined}>{number(send.unknown)}</td>
              <td>{number(send.skipped)}</td>
              <RateCell count={send.bounced} rate={send.bounceRate} />
              <RateCell count={send.complained} rate={send.complaintRate} />
            </tr>
          ))}
        </tbody>
      </table>
      {sends.length === 0 ? <p className="muted">No recap has been sent yet.</p> : null}
      <p className="muted">
        Failed: refused by the provider (a rerun tries them again). Unknown: in a batch that could not be settled; <code>npm run digest -- --history</code> lists it and{' '}
        <code>--settle BATCH send|skip</code> decides it. Skipped: settled as not sent.
      </p>
      {advice.map((line) => (
        <p className="advice" key={line}>
          {line}
        </p>
      ))}
    </Section>
  );
}

function ComingWeeksSection({ coming }: { coming: ReportData['coming'] }) {
  return (
    <Section id="coming" title="Coming weeks" lede="Weeks in content/recaps that are not public yet: when each page becomes public and when the schedule e-mails it.">
      {coming.length === 0 ? (
        <p>None: every week in content/recaps is public.</p>
      ) : (
        <ul>
          {coming.map((week) => (
            <li key={week.date}>
              <b>{week.label}</b>: {week.line}.{week.warning ? <p className="advice">Warning: {week.warning}</p> : null}
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

function NextRunSection({ nextRun }: { nextRun: ReportData['nextRun'] }) {
  return (
    <Section id="next-run" title="Next scheduled run" lede="What the Monday job would do next, and the pre-send checks on the e-mail it would send.">
      {nextRun.kind === 'off' ? (
        <p>{nextRun.reason}</p>
      ) : (
        <>
          <p>
            <b>{when(nextRun.at, nextRun.timezone)}</b> — DIGEST_CRON "{nextRun.cron}" in {nextRun.timezone}.
          </p>
          {nextRun.recap && !nextRun.reason ? (
            <p>
              Sends {nextRun.recap.label} — {nextRun.recap.headline} to {number(Math.max(0, nextRun.activeSubscribers - nextRun.alreadyHaveIt))} of{' '}
              {number(nextRun.activeSubscribers)} active subscribers ({number(nextRun.alreadyHaveIt)} already have it).
            </p>
          ) : (
            <p>Would send nothing: {nextRun.reason}.</p>
          )}
          {nextRun.recap ? (
            <>
              <h3 style={{ fontSize: 16, marginBottom: 0 }}>Pre-send checks on {nextRun.recap.label}</h3>
              <Checks checks={nextRun.checks} />
            </>
          ) : null}
        </>
      )}
    </Section>
  );
}

export function ReportPage({ data, charts }: { data: ReportData; charts: Charts }) {
  const { snapshot, totals, sends, nextRun } = data;
  const recentWeeks = snapshot.weeks.slice(-12).reverse();
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Launched Weekly — list report</title>
        <style>{STYLES}</style>
      </head>
      <body>
        <main>
          <h1>Launched Weekly — list report</h1>
          <p className="muted">
            Generated {data.generatedAt.toISOString().replace('T', ' ').slice(0, 16)} UTC for {data.siteUrl}
          </p>
          <div className="cards" id="totals">
            {STATES.map((state) => (
              <div className="card" key={state} data-state={state}>
                <b>{number(totals[state])}</b>
                {state}
              </div>
            ))}
          </div>

          <SubscribersSection weeks={recentWeeks} svg={charts.subscribers} />

          <Section id="signups" title="New signups per week" lede="Addresses that signed up for the first time each week.">
            <Chart svg={charts.signups} label="New signups per week" />
          </Section>

          <SourcesSection sources={snapshot.sources} svg={charts.sources} />

          <GrowthSection growth={data.growth} />

          <SendsSection sends={sends} svg={charts.rates} />

          <ClicksSection engagement={data.engagement} charts={charts} />

          <Section
            id="mail-outbox"
            title="Mail outbox"
            lede={`Confirmations, welcomes and notices of the last ${data.outbox.days} days: queued and retrying ones go out by themselves; a failed one was refused by the provider; while the provider refuses the sender itself (its key or quota), all of them are held, never failed; an unknown one met a 409 under its own key, so an earlier try very likely went out, and it is not tried again.`}
          >
            <OutboxTable outbox={data.outbox} />
          </Section>

          <NextRunSection nextRun={nextRun} />

          <Section id="setup" title="Set-up checks" lede="How the servers are set up, from what they recorded while serving.">
            <Checks checks={data.setupChecks} />
          </Section>

          <ComingWeeksSection coming={data.coming} />
        </main>
      </body>
    </html>
  );
}
