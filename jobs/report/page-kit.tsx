// What every section of the report page writes the same way: counts, rates and a chart's figure.
export const number = (n: number) => n.toLocaleString('en-US');
export const percent = (r: number) => `${(r * 100).toFixed(r > 0 && r < 0.001 ? 3 : 2)} %`;

export function Chart({ svg, label }: { svg: string | null; label: string }) {
  if (!svg) return <p className="muted">Nothing to chart yet.</p>;
  return <figure className="chart" role="group" aria-label={label} style={{ margin: 0 }} dangerouslySetInnerHTML={{ __html: svg }} />;
}
