import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import Redis from 'ioredis';
import { resealSecrets, runMigrations } from '@app/persistence';
import { APP_NODE_FLAGS, environmentOrExit, LOCAL_SECRETS_KEY_FILE, localSecretsKey, SecretBox } from '@app/runtime';
// Not through @app/runtime: only this runner needs pino-pretty, the apps never load it.
import { prettyLogLines } from '../libs/runtime/src/logging/pretty-log-lines';

/**
 * `npm start`: the one-command local run. Checks PostgreSQL and Redis, migrates, starts the three
 * apps as child processes, waits until each is ready and says where everything listens.
 */

const LOCAL_DEFAULTS: Record<string, string> = {
  ADMIN_TOKEN: 'dev-admin-token-change-me',
  INGEST_TOKEN: 'dev-ingest-token-change-me',
  // The example receiver and demo run on this machine; deployed apps keep the safe default (false).
  ALLOW_PRIVATE_TARGETS: 'true',
};

const APPS = [
  { name: 'config-api', entry: 'dist/apps/config-api/src/main.js', portVariable: 'CONFIG_API_PORT', serves: 'Open API /open_api_v1/*, admin API /admin/v1/*' },
  { name: 'ingest', entry: 'dist/apps/ingest/src/main.js', portVariable: 'INGEST_PORT', serves: 'events /v1/events, bot calls /v1/bot/*' },
  { name: 'delivery-worker', entry: 'dist/apps/delivery-worker/src/main.js', portVariable: 'WORKER_PORT', serves: 'health and metrics only' },
] as const;

/**
 * Where the apps listen: loopback only unless LISTEN_HOST says otherwise (CONTRACT §1), whatever NODE_ENV,
 * since this runner hands out well-known tokens and allows private targets.
 */
const LOCAL_LISTEN_HOST = '127.0.0.1';

/** The address to reach an app on: the one it listens on, or loopback when it listens on every interface. */
function reachableHost(listenHost: string): string {
  if (listenHost === '0.0.0.0' || listenHost === '::') return '127.0.0.1';
  return listenHost.includes(':') ? `[${listenHost}]` : listenHost;
}

function say(line: string): void {
  process.stdout.write(`[start] ${line}\n`);
}

async function checkPostgres(url: string): Promise<string | null> {
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function checkRedis(url: string): Promise<string | null> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 3000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    redis.disconnect();
  }
}

async function waitReady(origin: string, child: ChildProcess, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const response = await fetch(`${origin}/health/ready`);
      if (response.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

async function main(): Promise<void> {
  for (const [name, value] of Object.entries(LOCAL_DEFAULTS)) {
    if (process.env[name] === undefined && process.env.NODE_ENV !== 'production') {
      process.env[name] = value;
      say(`${name} not set; using the local default "${value}"`);
    }
  }
  if (process.env.SECRETS_KEY === undefined && process.env.NODE_ENV !== 'production') {
    const local = localSecretsKey(process.cwd());
    process.env.SECRETS_KEY = local.value;
    say(`SECRETS_KEY not set; ${local.generated ? 'generated a local key in' : 'using the local key kept in'} ${LOCAL_SECRETS_KEY_FILE} (keep it: it decrypts the stored secrets)`);
  }
  if (!process.env.LISTEN_HOST) {
    process.env.LISTEN_HOST = LOCAL_LISTEN_HOST;
    say(`LISTEN_HOST not set; listening on ${LOCAL_LISTEN_HOST} only (set LISTEN_HOST=0.0.0.0 to listen on every interface)`);
  }
  const environment = environmentOrExit('start');
  const host = reachableHost(environment.listenHost ?? LOCAL_LISTEN_HOST);
  const originOf = (port: string): string => `http://${host}:${port}`;

  const postgresProblem = await checkPostgres(environment.database.url);
  if (postgresProblem) {
    say(`PostgreSQL is not reachable at ${new URL(environment.database.url).host} (${postgresProblem}).`);
    say('Start it, e.g.: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start');
    say('or: docker compose up -d postgres redis   (then run npm start again)');
    process.exit(1);
  }
  const redisProblem = await checkRedis(environment.redis.url);
  if (redisProblem) {
    say(`Redis is not reachable at ${new URL(environment.redis.url).host} (${redisProblem}).`);
    say('Start it, e.g.: redis-server --daemonize yes --bind 127.0.0.1 --port 6379');
    process.exit(1);
  }

  const report = await runMigrations(environment.database.url);
  say(report.applied.length ? `migrations applied: ${report.applied.join(', ')}` : 'database schema is up to date');
  const sealed = await resealSecrets(environment.database.url, new SecretBox(environment.secrets));
  if (sealed.accounts + sealed.bot_webhooks > 0) say(`sealed ${sealed.accounts + sealed.bot_webhooks} stored secret(s) with SECRETS_KEY (plaintext or an older key before)`);

  const ports: Record<string, string> = {
    CONFIG_API_PORT: String(environment.ports.configApi),
    INGEST_PORT: String(environment.ports.ingest),
    WORKER_PORT: String(environment.ports.worker),
  };
  const children: ChildProcess[] = [];
  let stopping = false;
  const stopAll = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    say(`stopping (${signal})...`);
    for (const child of children) child.kill('SIGTERM');
  };
  process.on('SIGINT', () => stopAll('SIGINT'));
  process.on('SIGTERM', () => stopAll('SIGTERM'));

  // Readable lines in a terminal; production (and anything that sets LOG_FORMAT=json) keeps raw JSON.
  const readable = process.env.NODE_ENV !== 'production' && process.env.LOG_FORMAT !== 'json';
  const format = readable ? prettyLogLines(process.stdout.isTTY === true) : (line: string): string => line;
  for (const app of APPS) {
    const child = spawn(process.execPath, [...APP_NODE_FLAGS, app.entry], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${app.name}] ${format(line)}\n`));
    }
    child.on('exit', (code, signal) => {
      say(`${app.name} exited (${signal ?? code})`);
      if (!stopping) stopAll('SIGTERM');
      if (children.every((each) => each.exitCode !== null || each.signalCode !== null)) process.exit(stopping ? 0 : 1);
    });
  }

  const ready = await Promise.all(APPS.map((app, index) => waitReady(originOf(ports[app.portVariable]), children[index])));
  if (ready.some((ok) => !ok)) {
    say('an app did not become ready; see its log lines above');
    stopAll('SIGTERM');
    return;
  }
  say('all three apps are ready:');
  for (const app of APPS) say(`  ${app.name.padEnd(16)} ${originOf(ports[app.portVariable])}  (${app.serves})`);
  say(`  admin token: ${environment.auth.adminToken ?? '(none)'}   ingest token: ${environment.auth.ingestTokens[0] ?? '(none)'}`);
  say(`  console: ${originOf(ports.CONFIG_API_PORT)}/admin   API references: /docs on each app`);
  say('try it: npm run demo   (in another terminal)   stop: Ctrl+C');
}

main().catch((error: unknown) => {
  say(`failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
