import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const SOURCES = join(ROOT, 'apps', 'console');
export const CONSOLE_DIST = join(ROOT, 'dist', 'console');

function newestModification(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestModification(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The browser test needs the built console (what `npm run build` writes to dist/console). It builds it
 * here when it is missing or older than its sources, so a test run never looks at a stale console.
 */
export async function ensureConsoleBuilt(): Promise<void> {
  const index = join(CONSOLE_DIST, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestModification(SOURCES)) return;
  try {
    await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(SOURCES, 'vite.config.ts')], {
      cwd: ROOT,
      timeout: 120_000,
    });
  } catch (error) {
    const failure = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`building the console (vite build) failed: ${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
  }
}
