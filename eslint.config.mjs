import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

// What the image builds and ships (apps, libs, scripts, examples) never reaches into the bench or the tests.
const outsideProduct = { group: ['**/bench', '**/bench/**', '**/test', '**/test/**'], message: 'The product never imports bench/ or test/ (the image has neither).' };

export default tseslint.config(
  // clients/typescript/src/generated is @hey-api/openapi-ts's output (npm run clients), not code of ours to lint.
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'jest.config.js', 'eslint.config.mjs', 'clients/typescript/dist/**', 'clients/typescript/src/generated/**', 'clients/python/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Plain Node scripts (not part of any tsconfig): linted without type information.
    files: ['**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { console: 'readonly', process: 'readonly', URL: 'readonly' },
    },
  },
  {
    files: ['apps/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/libs/*'], message: 'Import libs by their @app/ alias.' }, outsideProduct] }],
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/apps/*', '**/libs/*'], message: 'Libs never import apps; import other libs by their @app/ alias.' }, outsideProduct] }],
    },
  },
  {
    files: ['scripts/**/*.ts', 'examples/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [outsideProduct] }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      'no-restricted-imports': 'off',
    },
  },
);
