import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config.ts';

// Four projects (docs/testing.md): `npm test` runs them all, `npm run test:unit` only the first,
// which needs no build, no PostgreSQL and no browser, so its global set-ups never run.

/** Tests in tests/ that need nothing but the code: no build, no database server, no browser. */
const UNIT_TESTS = [
  'tests/bench-results.test.ts',
  'tests/config-runtime.test.ts',
  'tests/config.test.ts',
  'tests/confirm-token.test.ts',
  'tests/docs-links.test.ts',
  'tests/mailbox-key-sql.test.ts',
  'tests/mailer-resend.test.ts',
];

/** Tests beside the code that start the production build or a command-line tool. */
const UNIT_EXCEPTIONS = ['content/content.test.ts', 'jobs/digest/when.test.ts'];

/** Tests that drive Chromium (tests/support/browser.ts). */
const BROWSER_TESTS = [
  'tests/*.e2e.test.ts',
  'tests/double-opt-in.test.ts',
  'tests/outbox-restart.test.ts',
  'tests/publishing.test.ts',
  'tests/report-clicks.test.ts',
  'tests/security-headers.test.ts',
  'tests/seo.test.ts',
  'tests/signup-flood.test.ts',
  'tests/subscription-page.test.ts',
  'tests/suppression.test.ts',
  'tests/welcome-email.test.ts',
];

/** Release-sized: a container's build from `npm ci`, a copied tree built by Vite, 11,000 signups, ten `npm start` restarts. */
const RELEASE_TESTS = ['tests/image-steps.test.ts', 'tests/generated-weeks.test.ts', 'tests/signup-load.test.ts', 'tests/embedded-lock.test.ts'];

const BESIDE_CODE = '{bin,content,client,server,emails,jobs,scripts}/**/*.test.{ts,tsx}';
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
