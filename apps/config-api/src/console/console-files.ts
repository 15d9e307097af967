import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where the console's pages live under config-api. `/admin/v1/*` stays the admin API. */
export const CONSOLE_ROOT = '/admin';

/**
 * `dist/console` of the repository (or image) this code runs from: the nearest folder above with a
 * package.json. The same answer for the compiled app (dist/apps/…) and the TypeScript source in tests.
 */
export function consoleDirectory(from: string = __dirname): string {
  let folder = from;
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) return join(from, 'console');
    folder = parent;
  }
  return join(folder, 'dist', 'console');
}

/**
 * Page routes the single-page console answers with its index.html: `/admin` and everything under it
 * except the API (`/admin/v1…`) and the built assets (a missing asset is a 404, not a page).
 */
export const CONSOLE_PAGE_ROUTE = /^\/admin(?:\/(?!v1(?:\/|$)|assets\/).*)?$/;
