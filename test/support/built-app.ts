import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { childEnvironment } from './child-environment';
import { waitFor } from '@app/testing';

export type BuiltAppName = 'config-api' | 'ingest' | 'delivery-worker';

const ROOT = join(__dirname, '..', '..');

export function builtEntryPoint(app: BuiltAppName): string {
  return join(ROOT, 'dist', 'apps', app, 'src', 'main.js');
}

/** Fails with a clear message when `npm run build` has not produced this file. */
export function requireBuiltFile(path: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm run build first`);
}

/** Fails with a clear message when `npm run build` has not produced the app. */
export function requireBuilt(app: BuiltAppName): void {
  requireBuiltFile(builtEntryPoint(app));
}

export interface BuiltAppProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code, or the signal that ended the process. */
  exited: Promise<{ how: number | string; at: number }>;
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** Sends SIGTERM and resolves with how long the process took to exit (SIGKILLed after `limitMs`). */
  terminate(limitMs: number): Promise<{ ms: number; how: number | string }>;
}

/**
 * One built app (`node dist/apps/<app>/src/main.js`) as a real process, with the test run's settings
 * plus `env`, on a random port. It is SIGKILLed if it outlives the test's limit.
 */
export function spawnBuiltApp(app: BuiltAppName, env: Record<string, string>): BuiltAppProcess {
  requireBuilt(app);
  const child = spawn(process.execPath, [builtEntryPoint(app)], {
    cwd: ROOT,
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ how: number | string; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ how: signal ?? code ?? -1, at: Date.now() })),
  );
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    child,
    output: () => output,
    exited,
    // A deadline, not an expectation: on a loaded machine starting a built app alone takes 10-20 s.
    waitForOutput: async (text, timeoutMs = 60_000) => {
      await waitFor(`${app} to print "${text}"`, () => {
        if (output.includes(text)) return true;
        if (done) throw new Error(`${app} exited before printing "${text}":\n${output.slice(-4000)}`);
        return false;
      }, { timeoutMs, intervalMs: 25 });
    },
    terminate: async (limitMs) => {
      const sent = Date.now();
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
      const { how, at } = await exited;
      clearTimeout(killer);
      return { ms: at - sent, how };
    },
  };
}

/** One JSON line of an app's log: a request's own line (`req`, `res`) or a line it wrote (`msg`, `requestId`). */
export interface LogLine {
  msg?: string;
  requestId?: unknown;
  req?: { id?: unknown; method?: string; path?: string };
  res?: { statusCode?: number };
}

/** The JSON lines of an app's captured output, in order (anything else it printed is skipped). */
export function jsonLogLines(output: string): LogLine[] {
  return output.split('\n').flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as LogLine] : []));
}
