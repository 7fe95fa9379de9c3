import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config.ts';

// Four projects (docs/testing.md): `npm test` runs them all, `npm run test:unit` only the first,
// which needs no build, no PostgreSQL and no browser, so its global set-ups never run.

/** Tests in tests/ that need nothing but the code: no build, no database server, no browser. */
const UNIT_TESTS = [
  'tests/docs/bench-results.test.ts',
  'tests/server/config-runtime.test.ts',
  'tests/server/config.test.ts',
  'tests/subscribers/confirm-token.test.ts',
  'tests/docs/docs-links.test.ts',
  'tests/subscribers/mailbox-key-sql.test.ts',
  'tests/mail/mailer-resend.test.ts',
];

/** Tests beside the code that start the production build or a command-line tool. */
const UNIT_EXCEPTIONS = ['content/content.test.ts', 'jobs/digest/when.test.ts'];

/** Tests that drive Chromium (tests/support/browser.ts). */
const BROWSER_TESTS = [
  'tests/e2e/*.test.ts',
  'tests/subscribers/double-opt-in.test.ts',
  'tests/mail/outbox-restart.test.ts',
  'tests/site/publishing.test.ts',
  'tests/report/report-clicks.test.ts',
  'tests/site/security-headers.test.ts',
  'tests/site/seo.test.ts',
  'tests/subscribers/signup-flood.test.ts',
  'tests/subscribers/subscription-page.test.ts',
  'tests/mail/suppression.test.ts',
  'tests/mail/welcome-email.test.ts',
];

/** Release-sized: a container's build from `npm ci`, a copied tree built by Vite, 11,000 signups, ten `npm start` restarts. */
const RELEASE_TESTS = ['tests/release/*.test.ts'];

const BESIDE_CODE = '{bin,content,client,shared,server,jobs,scripts}/**/*.test.{ts,tsx}';
const BUILD_AND_POSTGRES = ['tests/setup/build.ts', 'tests/setup/postgres.ts'];

export default mergeConfig(
  viteConfig,
  defineConfig({
    test: {
      // A test that starts its own embedded database needs ~3 s on a quiet machine and over 30 s on
      // a loaded one; the limit catches hangs, not slowness (speed lives in bench/).
      testTimeout: 90_000,
      hookTimeout: 120_000,
      // Two cores: one file per core keeps browser and database tests from starving each other.
      maxWorkers: 2,
      // A worker keeps the modules it has loaded from one file to the next instead of loading the
      // app again for each file. Tests here share no mocks or globals they change (the one vi.mock,
      // in the simulated Mondays, only memoizes a pure function), and each opens its own stores.
      isolate: false,
      env: { NODE_ENV: 'test' },
      // CI reads a plain 'N passed, N failed' line that .ci/run prints from this file.
      reporters: process.env.CI ? ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]] : ['default'],
      projects: [
        {
          extends: true,
          test: { name: 'unit', include: [BESIDE_CODE, ...UNIT_TESTS], exclude: UNIT_EXCEPTIONS },
        },
        {
          extends: true,
          test: {
            name: 'integration',
            include: ['tests/**/*.test.{ts,tsx}', ...UNIT_EXCEPTIONS],
            exclude: [...UNIT_TESTS, ...BROWSER_TESTS, ...RELEASE_TESTS],
            globalSetup: BUILD_AND_POSTGRES,
          },
        },
        {
          extends: true,
          test: { name: 'browser', include: BROWSER_TESTS, globalSetup: [...BUILD_AND_POSTGRES, 'tests/setup/browser.ts'] },
        },
        {
          extends: true,
          test: { name: 'release', include: RELEASE_TESTS, globalSetup: BUILD_AND_POSTGRES },
        },
      ],
    },
  }),
);
