import { join } from 'node:path';
import { waitFor } from '@app/testing';
import { APP_NODE_FLAGS } from '@app/runtime';
import { type BenchEnvironment, freePort } from './bench-environment';
import type { ProcessSupervisor, SupervisedProcess } from './process-supervisor';

/** The compiled tree: this file runs as dist/bench/support/service-stack.js. */
const DIST = join(__dirname, '..', '..');
type AppName = 'config-api' | 'ingest' | 'delivery-worker';
const PORT_VARIABLE: Record<AppName, string> = { 'config-api': 'CONFIG_API_PORT', ingest: 'INGEST_PORT', 'delivery-worker': 'WORKER_PORT' };

export interface RunningApp {
  name: string;
  url: string;
  process: SupervisedProcess;
}

/** What the person running the bench asked for on the command line. */
export interface StackOptions {
  /** Settings for every app the bench starts (`--env KEY=VALUE`), after the bench's own. */
  env: Record<string, string>;
  /** When set, ingest and worker write V8 CPU profiles here when they exit (`--profile <dir>`). */
  profileDir: string | null;
}

/**
 * The built apps (`dist/apps/<app>/src/main.js`) as production processes: NODE_ENV=production,
 * LOG_LEVEL=warn, real tokens, the bench's database and Redis prefix; private targets allowed only
 * because every receiver is on loopback.
 */
export class ServiceStack {
  private count = 0;

  constructor(
    private readonly supervisor: ProcessSupervisor,
    private readonly environment: BenchEnvironment,
    private readonly options: StackOptions,
  ) {}

  /** A setting as the apps get it from --env, or undefined when the bench leaves it at the app's default. */
  setting(name: string): string | undefined {
    return this.options.env[name];
  }

  async start(app: AppName, extraEnv: Record<string, string> = {}): Promise<RunningApp> {
    const port = await freePort();
    const name = `${app}#${++this.count}`;
    const child = this.supervisor.start(name, join(DIST, 'apps', app, 'src', 'main.js'), {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: this.environment.databaseUrl,
      REDIS_URL: this.environment.redisUrl,
      REDIS_PREFIX: this.environment.redisPrefix,
      ADMIN_TOKEN: this.environment.adminToken,
      INGEST_TOKEN: this.environment.ingestToken,
      SECRETS_KEY: this.environment.secretsKey,
      ALLOW_PRIVATE_TARGETS: 'true',
      [PORT_VARIABLE[app]]: String(port),
      ...this.options.env,
      ...extraEnv,
    }, [...APP_NODE_FLAGS, ...(this.options.profileDir && app !== 'config-api' ? ['--cpu-prof', `--cpu-prof-dir=${this.options.profileDir}`, `--cpu-prof-name=${name.replace('#', '-')}.cpuprofile`] : [])]);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(`${name} to be ready`, async () => {
      if (child.child.exitCode !== null) throw new Error(`${name} exited: ${child.output().slice(-2000)}`);
      const response = await fetch(`${url}/health/ready`);
      return response.status === 200;
    }, { timeoutMs: 60_000, intervalMs: 100 });
    return { name, url, process: child };
  }
}
