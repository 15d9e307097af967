import { defineConfig } from 'vite';

/** This folder, whatever the working directory (`npm run build` runs from the repository root). */
const here = decodeURIComponent(new URL('.', import.meta.url).pathname);

/**
 * The console builds to static files in dist/console, served by config-api under /admin. JSX goes
 * through esbuild with Preact's automatic runtime; the output has no inline scripts (strict CSP).
 */
export default defineConfig({
  root: here,
  base: '/admin/',
  publicDir: false,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: {
    alias: {
      '@app/payloads/actions': `${here}../../libs/payloads/src/actions.ts`,
      '@app/payloads/admin-api.types': `${here}../../libs/payloads/src/admin-api.types.ts`,
      '@app/payloads/data-protection.types': `${here}../../libs/payloads/src/data-protection.types.ts`,
      '@app/payloads/destination.types': `${here}../../libs/payloads/src/destinations/destination.types.ts`,
    },
  },
  build: {
    outDir: `${here}../../dist/console`,
    emptyOutDir: true,
    target: 'es2022',
    // The preload polyfill is only for browsers without modulepreload; current Chromium and Firefox have it.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    // Two pages, one build: the console (/admin) and the account portal (/portal, served from portal.html).
    rollupOptions: { input: { console: `${here}index.html`, portal: `${here}portal.html` } },
  },
  logLevel: 'warn',
});
