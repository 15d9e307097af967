import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { waitFor } from '@app/testing';
import { cleanup } from './cleanup-stack';

export type AppName = 'config-api' | 'ingest' | 'delivery-worker';

export const REPOSITORY_ROOT = join(__dirname, '..', '..');

const PORT_VARIABLE: Record<AppName, string> = {
  'config-api': 'CONFIG_API_PORT',
  ingest: 'INGEST_PORT',
  'delivery-worker': 'WORKER_PORT',
};

/** What a process's output is cut to: enough to explain a failure without holding a run's worth of logs. */
const OUTPUT_TAIL_CHARS = 8_000;

/** A loopback port nobody listens on right now (the kernel picks it; the caller binds it soon after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port assigned');
  return address.port;
}

export function builtEntryPoint(app: AppName): string {
  return join(REPOSITORY_ROOT, 'dist', 'apps', app, 'src', 'main.js');
}

export function assertBuilt(): void {
  for (const app of Object.keys(PORT_VARIABLE) as AppName[]) {
    if (!existsSync(builtEntryPoint(app))) throw new Error(`${builtEntryPoint(app)} is missing: run npm run build first`);
  }
}

export interface ExitOutcome {
  /** The exit code, or the signal that ended the process. */
  how: number | string;
  at: number;
}

/**
 * One built app (`node dist/apps/<app>/src/main.js`) as a separate production process on its own loopback
 * port. Killed with SIGKILL at the latest by the run's cleanup.
 */
export class AppProcess {
  readonly exited: Promise<ExitOutcome>;
  private output = '';
  private exitOutcome?: ExitOutcome;
  private readonly unregister: () => void;

  private constructor(
    readonly app: AppName,
    readonly label: string,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    const collect = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitOutcome = { how: signal ?? code ?? -1, at: Date.now() };
        resolve(this.exitOutcome);
      });
    });
    this.unregister = cleanup.add(
      label,
      () => this.stop(),
      () => {
        if (this.running) child.kill('SIGKILL');
      },
    );
  }

  /** Spawns the app; `waitUntilReady` waits for /health/ready (PostgreSQL and Redis answering). */
  static async start(app: AppName, label: string, env: Record<string, string>, { waitUntilReady = true } = {}): Promise<AppProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [builtEntryPoint(app)], {
      cwd: REPOSITORY_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env, [PORT_VARIABLE[app]]: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = new AppProcess(app, label, port, child);
    if (waitUntilReady) await started.ready();
    return started;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.exitOutcome === undefined;
  }

  /** The last lines the process wrote, for failure messages. */
  tail(lines = 15): string {
    return this.output.trimEnd().split('\n').slice(-lines).join('\n');
  }

  async ready(timeoutMs = 45_000): Promise<void> {
    await waitFor(
      `${this.label} to answer /health/ready`,
      async () => {
        if (!this.running) throw new Error(`${this.label} exited (${String(this.exitOutcome?.how)}):\n${this.tail()}`);
        const response = await fetch(`${this.url}/health/ready`, { signal: AbortSignal.timeout(2_000) });
        await response.body?.cancel();
        return response.status === 200;
      },
      { timeoutMs, intervalMs: 200 },
    ).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${this.tail()}`);
    });
  }

  /** True once /health/live answers (the HTTP server listens, whatever PostgreSQL and Redis do); false after `timeoutMs`. */
  async live(timeoutMs: number): Promise<boolean> {
    return waitFor(
      `${this.label} to answer /health/live`,
      async () => {
        if (!this.running) return undefined;
        const response = await fetch(`${this.url}/health/live`, { signal: AbortSignal.timeout(1_000) });
        await response.body?.cancel();
        return response.status === 200;
      },
      { timeoutMs, intervalMs: 200 },
    ).then(
      () => true,
      () => false,
    );
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** Resolves with the exit, or undefined if the process is still running after `timeoutMs`. */
  async exitWithin(timeoutMs: number): Promise<ExitOutcome | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL (the drills never need this process's shutdown to be graceful here) and wait for the exit. */
  async stop(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
    this.unregister();
  }
}
