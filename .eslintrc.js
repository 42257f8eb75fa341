/**
 * ESLint 9 in its legacy (eslintrc) mode: the design card fixes this file name, and ESLint 10
 * no longer reads it. `npm run lint` sets ESLINT_USE_FLAT_CONFIG=false.
 */
module.exports = {
  root: true,
  extends: ['eslint:recommended'],
  ignorePatterns: ['.eslintrc.js', 'dist/', 'node_modules/'],
  rules: {
    'no-console': ['error', { allow: ['warn', 'error'] }],
    eqeqeq: ['error', 'always'],
  },
  overrides: [
    {
      files: ['*.ts'],
      parser: '@typescript-eslint/parser',
      parserOptions: {
        project: ['tsconfig.json', 'packages/*/tsconfig.json'],
        tsconfigRootDir: __dirname,
        sourceType: 'module',
      },
      plugins: ['@typescript-eslint'],
      extends: ['plugin:@typescript-eslint/recommended', 'plugin:@typescript-eslint/recommended-type-checked'],
      env: { node: true, jest: true },
      rules: {
        // A dropped promise in a dispatcher is a lost delivery (STYLE §11).
        '@typescript-eslint/no-floating-promises': 'error',
        '@typescript-eslint/no-misused-promises': 'error',
        '@typescript-eslint/await-thenable': 'error',
        '@typescript-eslint/require-await': 'off',
        '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
        '@typescript-eslint/no-unsafe-function-type': 'off',
      },
    },
    {
      files: ['test/**/*.ts', '**/*.spec.ts', 'bench/**/*.ts'],
      rules: {
        'no-console': 'off',
        '@typescript-eslint/no-non-null-assertion': 'off',
        '@typescript-eslint/no-unsafe-assignment': 'off',
        '@typescript-eslint/no-unsafe-member-access': 'off',
        '@typescript-eslint/no-unsafe-argument': 'off',
        '@typescript-eslint/unbound-method': 'off',
      },
    },
    {
      // The dashboard: ES modules the browser loads as they are. tsconfig.dashboard.json
      // type-checks them; here they get the plain JavaScript parser and rules.
      files: ['src/dashboard/public/js/**/*.js'],
      parserOptions: { ecmaVersion: 2023, sourceType: 'module' },
      env: { browser: true, es2022: true },
      rules: {
        'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      },
    },
  ],
};
