// The layer rule (docs/architecture.md, "Layout"), checked by `npm run lint` (so by `npm test`): imports run
// downwards only, bin/ → jobs/ → server/ → content/, client/ beside server/ and never
// into it, shared/ (what both run) below the two of them; and no two modules import each other, directly or round a longer loop.
// Tests, benchmarks and build scripts may import any layer; what they import is still checked.
// A test may import any layer (a unit test beside the e-mail templates signs a link with the server's helper).
const TEST = '\\.test\\.tsx?$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Two modules that import each other (directly or round a loop) are one module in two files: move the shared part down.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'entry-points-are-not-imported',
      severity: 'error',
      comment: 'bin/ holds the process entry points; nothing imports them (a test starts one as a process instead).',
      from: { pathNot: '^bin/' },
      to: { path: '^bin/' },
    },
    {
      name: 'server-not-into-jobs',
      severity: 'error',
      comment: 'server/ is below jobs/: the digest uses the store and mailer, not the other way round. Wire the two together in bin/.',
      from: { path: '^server/', pathNot: TEST },
      to: { path: '^jobs/' },
    },
    {
      name: 'routes-not-into-routes',
      severity: 'error',
      comment: 'A route does not import another route: what two routes share lives below them (server/subscribers/signup.ts for signups, server/http/small-page.ts for the small pages).',
      from: { path: '^server/[^/]+/routes/([^/]+)\\.tsx?$', pathNot: TEST },
      to: { path: '^server/[^/]+/routes/', pathNot: '^server/[^/]+/routes/$1\\.tsx?$' },
    },
    // server/ is laid out by capability, and the capabilities stand on each other in one order:
    // store/ (the ground) < http/ (plumbing every route uses) < abuse/ (the bot defences' checks,
    // which say what they found and decide nothing) < subscribers/ (who is on the list, their links,
    // the signup route that runs the checks) < mail/ (what is sent to them) < site/ (pages, feeds,
    // previews, click links) < app.ts, config.ts, startup.ts (the wiring).
    // Beside them, metrics/ and notices/ (what operators watch: GET /metrics, the notice webhook)
    // stand on store/ and http/ only, and no other capability imports them.
    {
      name: 'store-is-the-ground',
      severity: 'error',
      comment: 'server/store/ knows no capability above it: it takes and returns plain data. Pass what it needs in as arguments.',
      from: { path: '^server/store/', pathNot: TEST },
      to: { path: '^server/(http|abuse|subscribers|mail|site|metrics|notices)/' },
    },
    {
      name: 'http-knows-no-capability',
      severity: 'error',
      comment: 'server/http/ is plumbing every route uses (errors, logs, the small pages, one address per page): it knows no subscriber, mail, defence or page.',
      from: { path: '^server/http/', pathNot: TEST },
      to: { path: '^server/(subscribers|mail|abuse|site|metrics|notices)/' },
    },
    {
      name: 'abuse-below-subscribers',
      severity: 'error',
      comment: 'server/abuse/ holds the bot defences as checks on plain values (keys, bodies, addresses); the signup route in subscribers/ runs them. They know no subscriber, mail or page.',
      from: { path: '^server/abuse/', pathNot: TEST },
      to: { path: '^server/(subscribers|mail|site)/' },
    },
    {
      name: 'subscribers-below-mail-and-site',
      severity: 'error',
      comment: 'server/subscribers/ decides who is on the list; what is mailed (mail/) and the pages (site/) use it, not the other way round.',
      from: { path: '^server/subscribers/', pathNot: TEST },
      to: { path: '^server/(mail|site)/' },
    },
    {
      name: 'mail-below-site',
      severity: 'error',
      comment: 'server/mail/ sends what subscribers/ decided; the pages (site/) use it, not the other way round, and it needs no bot defence.',
      from: { path: '^server/mail/', pathNot: TEST },
      to: { path: '^server/(site|abuse)/' },
    },
    {
      name: 'operator-rooms-on-store-and-http',
      severity: 'error',
      comment: 'server/metrics/ and server/notices/ read the store and answer over http/ only; the other capabilities do not know them (app.ts wires them in).',
      from: { path: '^server/(metrics|notices)/', pathNot: TEST },
      to: { path: '^server/(subscribers|mail|abuse|site|metrics|notices)/', pathNot: '^server/$1/' },
    },
    {
      name: 'capabilities-not-into-operator-rooms',
      severity: 'error',
      comment: 'server/metrics/ and server/notices/ sit beside the product capabilities, wired in by app.ts: no capability imports them.',
      from: { path: '^server/(store|http|subscribers|mail|abuse|site)/', pathNot: TEST },
      to: { path: '^server/(metrics|notices)/' },
    },
    {
      name: 'capabilities-not-into-the-wiring',
      severity: 'error',
      comment: 'server/app.ts and server/startup.ts wire the capabilities together; a capability folder never imports them (server/config.ts, the parsed settings, it may).',
      from: { path: '^server/[^/]+/', pathNot: TEST },
      to: { path: '^server/(app|startup)\\.ts$' },
    },
    {
      name: 'mail-templates-are-pure',
      severity: 'error',
      comment: 'server/mail/templates/ renders the e-mails from content/ alone; the senders call it, not the other way round.',
      from: { path: '^server/mail/templates/', pathNot: TEST },
      to: { path: '^(server|jobs)/', pathNot: '^server/mail/templates/' },
    },
    {
      name: 'client-not-into-server',
      severity: 'error',
      comment: 'client/ runs in the browser too: it knows nothing of the server, the jobs or the e-mails.',
      from: { path: '^client/', pathNot: TEST },
      to: { path: '^(server|jobs)/' },
    },
    {
      name: 'server-not-into-client',
      comment: 'The server takes from client/ only the SSR entry it renders pages with; what both sides run lives in shared/.',
      severity: 'error',
      from: { path: '^(server|jobs)/', pathNot: TEST },
      to: { path: '^client/', pathNot: '^client/entry-server\\.tsx$' },
    },
    {
      name: 'shared-is-pure',
      severity: 'error',
      comment: 'shared/ is what the browser and the server both run (the signup outcomes, the honeypot field, page heads): no React, no I/O, nothing but content/ below it.',
      from: { path: '^shared/', pathNot: TEST },
      to: { pathNot: ['^(shared|content)/', '(^|/)node_modules/zod/'] },
    },
    {
      name: 'content-is-pure',
      severity: 'error',
      comment: 'content/ is typed data and pure functions: no React, no I/O, nothing outside content/ but zod.',
      from: { path: '^content/', pathNot: TEST },
      to: { pathNot: ['^content/', '(^|/)node_modules/zod/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|data|coverage|\\.tmp)/' },
    // Type-only imports count: a type that runs upward still ties the lower layer to the upper.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
    skipAnalysisNotInRules: false,
  },
};
