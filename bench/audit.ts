// `npm audit --omit=dev`: known advisories in what production installs. It needs the registry's
// advisory service, so it is recorded here by hand (`npm run bench -- audit`) rather than run in
// CI, which must pass offline.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { recordResults } from './support/results.ts';

interface AuditReport {
  metadata?: { vulnerabilities?: Record<string, number>; dependencies?: { prod?: number; total?: number } };
  vulnerabilities?: Record<
    string,
    { severity: string; range: string; fixAvailable: boolean | { name: string; version: string; isSemVerMajor: boolean }; via: (string | { title?: string; url?: string })[] }
  >;
  message?: string;
  statusCode?: number;
}

export async function runAudit(): Promise<void> {
  const command = 'npm audit --omit=dev --json';
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)('npm', ['audit', '--omit=dev', '--json'], { maxBuffer: 32 * 1024 * 1024 }));
  } catch (error) {
    // npm exits 1 when it finds advisories, and when it cannot ask; both print the JSON report.
    stdout = (error as { stdout?: string }).stdout ?? '';
  }
  let report: AuditReport;
  try {
    report = JSON.parse(stdout) as AuditReport;
  } catch {
    report = { message: stdout.trim() || 'npm audit printed nothing' };
  }

  let body: string;
  if (report.metadata?.vulnerabilities) {
    const counts = report.metadata.vulnerabilities;
    const serious = Object.entries(report.vulnerabilities ?? {}).filter(([, v]) => v.severity === 'high' || v.severity === 'critical');
    const fix = (v: NonNullable<AuditReport['vulnerabilities']>[string]) =>
      v.fixAvailable === true
        ? 'yes, within the declared range (`npm update`)'
        : v.fixAvailable
          ? `${v.fixAvailable.name}@${v.fixAvailable.version}${v.fixAvailable.isSemVerMajor ? ' (major upgrade)' : ''}`
          : 'no fix published';
    body = `${report.metadata.dependencies?.prod ?? '?'} production dependencies. Advisories by severity: ${Object.entries(counts)
      .map(([severity, n]) => `${severity} ${n}`)
      .join(', ')}.

${
  serious.length === 0
    ? '**No high or critical advisories.**'
    : `| package | severity | vulnerable range | advisory | fix |\n|---|---|---|---|---|\n${serious
        .map(([name, v]) => `| ${name} | ${v.severity} | ${v.range} | ${v.via.map((via) => (typeof via === 'string' ? via : (via.url ?? via.title ?? ''))).join(', ')} | ${fix(v)} |`)
        .join('\n')}`
}`;
  } else {
    body = `**The audit could not run**: ${report.statusCode ? `HTTP ${report.statusCode}, ` : ''}${report.message ?? 'no report'}. The registry this machine reaches does not answer npm's advisory endpoint; rerun where it does.`;
  }
  await recordResults('Production dependency audit', 'npm run bench -- audit', `\`${command}\`: ${body}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await runAudit();
