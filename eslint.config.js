import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist', 'data', 'node_modules', 'coverage', '.tmp', 'scripts/.check-weeks.tmp.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Every function reads in one sitting, tests included: a long describe block is split into
    // named groups of tests that share its set-up.
    files: ['**/*.{ts,tsx}'],
    rules: {
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // Shipped code (what bin/ runs and the browser loads), the build scripts and the benchmarks.
    files: ['{bench,bin,client,content,jobs,server,shared,scripts}/**/*.{ts,tsx}'],
    ignores: ['**/*.test.{ts,tsx}'],
    rules: {
      // The compiled server bundles zod (scripts/build-node.ts): through `import * as z`, esbuild keeps
      // only the schemas used; `import { z }` pulls in all 64 locales and the JSON Schema converters.
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[source.value='zod'][importKind!='type'] > :matches(ImportSpecifier, ImportDefaultSpecifier)",
          message: "Write `import * as z from 'zod'`: the server's bundle then keeps only the parts of zod it uses.",
        },
      ],
    },
  },
);
