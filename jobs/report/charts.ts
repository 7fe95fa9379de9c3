// The report's charts: Vega-Lite specifications compiled and rendered to SVG by Vega on the server
// (renderer "none": no canvas, no DOM, no browser), so the page carries finished inline SVG and
// needs neither JavaScript nor a network request to show them. Every mark gets an aria-label with
// its values (Vega-Lite's default description), so a screen reader, and a test, can read them.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { RATE_LINE, STATES, type ReportData } from './gather.ts';

const WIDTH = 640;
const HEIGHT = 220;
export const STATE_COLORS: Record<(typeof STATES)[number], string> = {
  active: '#2e7d32',
  pending: '#f9a825',
  unsubscribed: '#78909c',
  bounced: '#ef6c00',
  complained: '#c62828',
};
const ALERT = '#c62828';
const FONT = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif';

const base = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  width: WIDTH,
  height: HEIGHT,
  background: 'white',
  config: { font: FONT, view: { stroke: null }, axis: { labelFontSize: 11, titleFontSize: 12 }, legend: { labelFontSize: 12, orient: 'top' } },
} as const;

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Week starts as the axis shows them: "Nov 23". */
const shortWeek = (iso: string) => new Date(`${iso}T00:00:00Z`).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

export function subscribersSpec(data: ReportData): TopLevelSpec {
  const values = data.snapshot.weeks.flatMap((week) => STATES.map((state) => ({ week: shortWeek(week.week), state, subscribers: week.states[state] ?? 0 })));
  const order = data.snapshot.weeks.map((week) => shortWeek(week.week));
  return {
    ...base,
    description: 'Subscribers at the end of each week, by state',
    data: { values },
    mark: { type: 'area', line: true, point: true, opacity: 0.85 },
    encoding: {
      x: { field: 'week', type: 'ordinal', sort: order, title: 'week starting', axis: { labelAngle: -45 } },
      y: { field: 'subscribers', type: 'quantitative', stack: 'zero', title: 'subscribers', axis: { tickMinStep: 1 } },
      color: { field: 'state', type: 'nominal', title: null, scale: { domain: [...STATES], range: STATES.map((s) => STATE_COLORS[s]) } },
      order: { field: 'state', sort: 'ascending' },
    },
  } as TopLevelSpec;
}

export function signupsSpec(data: ReportData): TopLevelSpec {
  const values = data.snapshot.weeks.map((week) => ({ week: shortWeek(week.week), signups: week.signups }));
  const order = values.map((v) => v.week);
  const encoding = {
    x: { field: 'week', type: 'ordinal', sort: order, title: 'week starting', axis: { labelAngle: -45 } },
    y: { field: 'signups', type: 'quantitative', title: 'new signups', axis: { tickMinStep: 1 } },
  };
  return {
    ...base,
    description: 'New signups per week',
    data: { values },
    encoding,
    layer: [{ mark: { type: 'bar', color: '#1565c0' } }, { mark: { type: 'text', dy: -6, fontSize: 11 }, encoding: { text: { field: 'signups', type: 'quantitative' } } }],
  } as TopLevelSpec;
}

export function sourcesSpec(data: ReportData): TopLevelSpec {
  const values = data.snapshot.sources.map((s) => ({ page: s.source, signups: s.signups }));
  const encoding = {
    y: { field: 'page', type: 'nominal', sort: null, title: null, axis: { labelLimit: 300 } }, // already in order: most signups first
    x: { field: 'signups', type: 'quantitative', title: 'signups (all time)', axis: { tickMinStep: 1 } },
  };
  return {
    ...base,
    height: Math.max(60, values.length * 26),
    description: 'Signups by the page they came from, top ten',
    data: { values },
    encoding,
    layer: [{ mark: { type: 'bar', color: '#6a1b9a' } }, { mark: { type: 'text', align: 'left', dx: 4, fontSize: 11 }, encoding: { text: { field: 'signups', type: 'quantitative' } } }],
  } as TopLevelSpec;
}

/** Bounce and complaint rate per recap (newest 26 sends), against the 0.3 % line. */
export function ratesSpec(data: ReportData): TopLevelSpec {
  const sends = data.sends.slice(0, 26).reverse();
  const values = sends.flatMap((send) => [
    { recap: send.recapDate, kind: 'bounce rate', percent: send.bounceRate * 100, over: send.bounceRate > RATE_LINE },
    { recap: send.recapDate, kind: 'complaint rate', percent: send.complaintRate * 100, over: send.complaintRate > RATE_LINE },
  ]);
  const line = RATE_LINE * 100;
  return {
    ...base,
    description: 'Bounce and complaint rate of each recap, with the 0.3 % line',
    data: { values },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          x: { field: 'recap', type: 'ordinal', title: 'recap', axis: { labelAngle: -45 } },
          xOffset: { field: 'kind', type: 'nominal' },
          y: { field: 'percent', type: 'quantitative', title: 'percent of messages sent', scale: { domainMin: 0, domainMax: Math.max(line * 2, ...values.map((v) => v.percent)) } },
          color: {
            condition: { test: 'datum.over', value: ALERT },
            field: 'kind',
            type: 'nominal',
            title: null,
            scale: { domain: ['bounce rate', 'complaint rate'], range: ['#546e7a', '#8e24aa'] },
          },
        },
      },
      { mark: { type: 'rule', color: ALERT, strokeDash: [6, 4], strokeWidth: 2 }, encoding: { y: { datum: line } } },
      { mark: { type: 'text', color: ALERT, align: 'right', dy: -6, x: 'width', fontSize: 11, text: '0.3 % line' }, encoding: { y: { datum: line } } },
    ],
  } as TopLevelSpec;
}

/** The site's /go/ clicks per recap (newest 26 sends), oldest on the left. */
export function clicksSpec(data: ReportData): TopLevelSpec {
  const values = data.engagement.weeks
    .slice(0, 26)
    .reverse()
    .map((week) => ({ recap: week.recapDate, clicks: week.clicks }));
  const encoding = {
    x: { field: 'recap', type: 'ordinal', sort: null, title: 'recap', axis: { labelAngle: -45 } },
    y: { field: 'clicks', type: 'quantitative', title: 'clicks', axis: { tickMinStep: 1 } },
  };
  return {
    ...base,
    description: "Clicks on each recap's e-mail links",
    data: { values },
    encoding,
    layer: [{ mark: { type: 'bar', color: '#00838f' } }, { mark: { type: 'text', dy: -6, fontSize: 11 }, encoding: { text: { field: 'clicks', type: 'quantitative' } } }],
  } as TopLevelSpec;
}

/** The most clicked launches across the weeks shown, most clicked on top. */
export function topLaunchesSpec(data: ReportData): TopLevelSpec {
  const values = data.engagement.topLaunches.map((launch) => ({ launch: `${launch.name} (${shortWeek(launch.recapDate)})`, clicks: launch.clicks }));
  const encoding = {
    y: { field: 'launch', type: 'nominal', sort: null, title: null, axis: { labelLimit: 300 } }, // already in order: most clicked first
    x: { field: 'clicks', type: 'quantitative', title: 'clicks', axis: { tickMinStep: 1 } },
  };
  return {
    ...base,
    height: Math.max(60, values.length * 26),
    description: 'The most clicked launches across the weeks shown',
    data: { values },
    encoding,
    layer: [{ mark: { type: 'bar', color: '#00838f' } }, { mark: { type: 'text', align: 'left', dx: 4, fontSize: 11 }, encoding: { text: { field: 'clicks', type: 'quantitative' } } }],
  } as TopLevelSpec;
}

export interface Charts {
  subscribers: string;
  signups: string;
  sources: string | null;
  rates: string | null;
  clicks: string | null;
  topLaunches: string | null;
}

export async function renderCharts(data: ReportData): Promise<Charts> {
  const [subscribers, signups, sources, rates, clicks, topLaunches] = await Promise.all([
    renderSvg(subscribersSpec(data)),
    renderSvg(signupsSpec(data)),
    data.snapshot.sources.length > 0 ? renderSvg(sourcesSpec(data)) : null,
    data.sends.length > 0 ? renderSvg(ratesSpec(data)) : null,
    data.engagement.weeks.length > 0 ? renderSvg(clicksSpec(data)) : null,
    data.engagement.topLaunches.length > 0 ? renderSvg(topLaunchesSpec(data)) : null,
  ]);
  return { subscribers, signups, sources, rates, clicks, topLaunches };
}
