import { randomBytes } from 'node:crypto';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import Redis from 'ioredis';
import { DeliveryQueues, loadEnvironment, type DeliveryJobData } from '@app/runtime';
import { PERMISSION_KEYS, SAMPLE_MESSAGES } from '@app/payloads';
import { STORE_EVENTS, storeEventsParams, type StoredRow } from '@app/persistence/testing';
import { backendCpuMs, backendDeltaMs, procCpuMs } from '../support/proc-cpu';

/**
 * The delivery worker alone, as deployed: `node dist/bench/worker-profile/worker-profile.js
 * [--events 20000] [--endpoints 20] [--endpoint-concurrency 10] [--rate 0] [--workers 1] [--prof DIR]
 * [--ordering none|subject] [--subjects N]`.
 * A fresh database (migrated by dist/scripts/migrate.js) and Redis prefix, both removed at the end; a receiver process on
 * 127.0.0.2… (one origin per endpoint); the BUILT worker started as a production process. Events are
 * stored with ingest's statement (STORE_EVENTS, 500 a call; no ingest process) and their jobs added
 * through DeliveryQueues, then the
 * figures: deliveries per second from the first add to the last recorded attempt, and the worker's CPU
 * time per delivery (/proc utime+stime). `--rate R` instead adds one event every 1/R s for 10 s and
 * reports job add → call latency (attempt started_at − event created_at). `--prof` runs the worker
 * with --cpu-prof (read the file with cpu-profile-summary.js). `--ordering subject` sets every endpoint's
 * delivery ordering (CONTRACT §9) before the worker starts; `--subjects N` makes the events about N
 * customers in turn (by default each event is about its own customer). `--status S`: the receiver answers
 * S; with a failing status every endpoint's breaker opens after BREAKER_FAILURE_THRESHOLD calls and the
 * other attempts are recorded without a call, so the figures are those of an open breaker's attempts
 * (counted once each event has its first attempt).
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    endpoints: { type: 'string', default: '20' },
    'endpoint-concurrency': { type: 'string', default: '10' },
    'worker-concurrency': { type: 'string' },
    rate: { type: 'string', default: '0' },
    seconds: { type: 'string', default: '10' },
    prof: { type: 'string' },
    workers: { type: 'string', default: '1' },
    ordering: { type: 'string', default: 'none' },
    subjects: { type: 'string', default: '0' },
    status: { type: 'string', default: '200' },
  },
});
const events = Number(values.events);
const endpoints = Number(values.endpoints);
const rate = Number(values.rate);
const subjects = Number(values.subjects);
const answerStatus = Number(values.status);
if (!Number.isInteger(answerStatus) || answerStatus < 200 || answerStatus > 599) throw new Error(`--status: expected an HTTP status, got ${values.status}`);
/** What ends an event's measured step: its push URL's delivery delivered, or (the receiver failing) its first attempt recorded. */
const DONE_SQL =
  answerStatus < 300
    ? `SELECT count(*) AS n FROM deliveries WHERE destination_id = 'primary' AND status = 'delivered'`
    : `SELECT count(*) AS n FROM deliveries WHERE destination_id = 'primary' AND attempts > 0`;
if (values.ordering !== 'none' && values.ordering !== 'subject') throw new Error(`--ordering: expected none or subject, got ${values.ordering}`);
/** dist/, where the built apps and scripts are. */
const root = join(__dirname, '..', '..');
const database = 'wp_bench';
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
const prefix = `wpbench${process.pid}`;
const port = 39_000 + (process.pid % 1000);
const workerPort = port + 1000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMs = (pid: number): number => procCpuMs(pid) ?? 0;
/** CPU ms of every PostgreSQL backend serving the bench database, by pid (backends come and go with the pools). */
const backendCpu = (db: Client): Promise<Map<number, number>> => backendCpuMs(db, database);

/** Calls per Redis command from INFO commandstats (server-wide: other users of this Redis count too). */
async function redisCommandCalls(redis: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]));
  return calls;
}

function redisServerPid(): number | null {
  const found = spawnSync('pgrep', ['-x', 'redis-server'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  return found ? Number(found) : null;
}

/** Started processes, ended with the harness whatever happens. */
const children: ChildProcess[] = [];

function startProcess(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (text !== 'ready\n') process.stdout.write(`[${args.at(-1)}] ${text}`);
  });
  return child;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Removes the bench database (a run's leftover at the start, its own at the end). */
async function dropDatabase(): Promise<void> {
  const server = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await server.connect();
  await server.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await server.end();
}

async function main(): Promise<void> {
  await dropDatabase();
  const migrated = spawnSync(process.execPath, [join(root, 'scripts/migrate.js')], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' });
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);

  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const hosts = Array.from({ length: endpoints }, (_, index) => `127.0.0.${2 + index}`);
  const permissions = JSON.stringify(Object.fromEntries(PERMISSION_KEYS.map((key) => [key, true])));
  const accounts: number[] = [];
  for (const host of hosts) {
    const [account] = (
      await db.query<{ id: number }>(`INSERT INTO accounts (email, name, open_api_token) VALUES ($1, $1, md5(random()::text)) RETURNING id`, [`wp-${host}@example.com`])
    ).rows;
    await db.query(`INSERT INTO callback_settings (account_id, permissions) VALUES ($1, $2::jsonb)`, [account.id, permissions]);
    // The push URL is the account's destination `primary` (a plaintext signing secret is read as it is).
    const target = `http://${host}:${port}/callbacks`;
    await db.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, format, ordering, signing_secret)
       VALUES ('primary', $1, 'webhook', $2, $2, 'JSON', 'udesk', $3, 'whsec_' || md5(random()::text))`,
      [account.id, target, values.ordering],
    );
    accounts.push(account.id);
  }

  const receiver = startProcess([join(__dirname, 'receiver.process.js')], { WP_HOSTS: hosts.join(','), WP_PORT: String(port), WP_STATUS: String(answerStatus) });
  const workerEnv: NodeJS.ProcessEnv = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: prefix,
    ALLOW_PRIVATE_TARGETS: 'true',
    ADMIN_TOKEN: 'wp-admin-token-0123456789',
    INGEST_TOKEN: 'wp-ingest-token-0123456789',
    SECRETS_KEY: `wp:${randomBytes(32).toString('base64')}`,
    WORKER_PORT: String(workerPort),
    ENDPOINT_CONCURRENCY: values['endpoint-concurrency'],
    ...(values['worker-concurrency'] ? { WORKER_CONCURRENCY: values['worker-concurrency'] } : {}),
  };
  const profArgs = values.prof ? ['--cpu-prof', `--cpu-prof-dir=${values.prof}`] : [];
  // `--workers N`: N worker processes consuming the same shards (scaled out as users do), each on its own port.
  const workerPorts = Array.from({ length: Math.max(1, Number(values.workers)) }, (_, index) => workerPort + index * 7);
  const workers = workerPorts.map((ownPort) =>
    startProcess([...profArgs, join(root, 'apps/delivery-worker/src/main.js')], { ...workerEnv, WORKER_PORT: String(ownPort) }),
  );
  for (const ownPort of workerPorts) {
    await waitFor(
      async () => {
        try {
          return (await fetch(`http://127.0.0.1:${ownPort}/health/ready`)).ok;
        } catch {
          return false;
        }
      },
      30_000,
      'the worker',
    );
  }
  await sleep(1000);

  // The harness adds where the worker consumes: DELIVERY_QUEUE_SHARDS (and the Redis deployment) as the worker is given them.
  const environment = loadEnvironment({ ...process.env, NODE_ENV: 'development', REDIS_PREFIX: prefix });
  const queues = DeliveryQueues.open(environment, 'producer');
  await queues.ready(5000);
  // Stored as ingest stores them (event, key, primary delivery, book entry): one statement per call.
  const insert = async (count: number, offset: number): Promise<DeliveryJobData[]> => {
    const batch = Array.from({ length: count }, (_, index) => {
      const n = offset + index;
      return {
        eventId: `wp-${n}`,
        accountId: accounts[n % accounts.length],
        action: 'Customer_create',
        messageText: JSON.stringify({ ...SAMPLE_MESSAGES.Customer_create, id: subjects > 0 ? n % subjects : n }),
        permissionKey: 'customer_create',
        test: false,
        takers: [],
      };
    });
    const { rows } = await db.query<StoredRow>(STORE_EVENTS.text, STORE_EVENTS.values(storeEventsParams(batch)));
    return rows
      .filter((row) => row.kind === 'queued')
      .map((row) => ({ eventSeq: row.seq as string, accountId: row.account_id, series: 0, attempt: 0, destinationId: row.destination_id ?? undefined }));
  };

  const redisPid = redisServerPid();
  const redisStart = redisPid ? cpuMs(redisPid) : 0;
  const stats = new Redis(environment.redis.url);
  const commandsStart = await redisCommandCalls(stats);
  const pgStart = await backendCpu(db);
  const workersCpu = (): number => workers.reduce((sum, worker) => sum + cpuMs(worker.pid as number), 0);
  const cpuStart = workersCpu();
  const started = performance.now();
  let total = events;
  if (rate > 0) {
    total = Math.round(rate * Number(values.seconds));
    for (let index = 0; index < total; index += 1) {
      const due = started + (index * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      void insert(1, index).then((steps) => queues.addBulk(steps));
    }
  } else {
    const steps: DeliveryJobData[] = [];
    for (let offset = 0; offset < events; offset += 500) steps.push(...(await insert(Math.min(500, events - offset), offset)));
    for (let offset = 0; offset < steps.length; offset += 1000) await queues.addBulk(steps.slice(offset, offset + 1000));
  }
  const added = performance.now();
  let done = 0;
  await waitFor(
    async () => {
      done = Number((await db.query<{ n: string }>(DONE_SQL)).rows[0].n);
      return done >= total;
    },
    600_000,
    'the deliveries',
  );
  const finished = performance.now();
  const cpu = workersCpu() - cpuStart;
  const redisCpu = redisPid ? cpuMs(redisPid) - redisStart : 0;
  const commands = [...(await redisCommandCalls(stats))]
    .map(([name, calls]): [string, number] => [name, (calls - (commandsStart.get(name) ?? 0)) / total])
    .filter(([, perDelivery]) => perDelivery >= 0.05)
    .sort((a, b) => b[1] - a[1]);
  stats.disconnect();
  const pgCpu = backendDeltaMs(pgStart, await backendCpu(db));
  const seconds = (finished - started) / 1000;
  const attempts = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM delivery_attempts`)).rows[0].n);
  process.stdout.write(
    `events ${total}, endpoints ${endpoints}, workers ${workers.length}, ENDPOINT_CONCURRENCY ${values['endpoint-concurrency']}: adds took ${((added - started) / 1000).toFixed(2)} s, ` +
      `delivered in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)}/s; attempts ${attempts}; ` +
      `worker CPU ${cpu} ms = ${Math.round((cpu * 1000) / total)} µs per delivery (${((cpu / (finished - started)) * 100).toFixed(0)}% of a core)\n` +
      `PostgreSQL backends of the bench database ${Math.round((pgCpu * 1000) / total)} µs per delivery (includes the harness's inserts and polling); ` +
      `redis-server ${Math.round((redisCpu * 1000) / total)} µs per delivery (shared with everything else using this Redis)\n` +
      `Redis commands per delivery (server-wide): ${commands.map(([name, perDelivery]) => `${name} ${perDelivery.toFixed(2)}`).join(', ')}\n`,
  );
  if (rate > 0) {
    const { rows } = await db.query<{ p50: number; p95: number; p99: number; max: number }>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, max(ms)::float8 AS max
         FROM (SELECT (EXTRACT(EPOCH FROM (a.started_at - e.created_at)) * 1000)::float8 AS ms FROM delivery_attempts a JOIN events e ON e.seq = a.event_seq) t`,
    );
    const row = rows[0];
    process.stdout.write(`event stored → call started: p50 ${row.p50.toFixed(1)} ms, p95 ${row.p95.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, max ${row.max.toFixed(1)} ms\n`);
  }

  const withoutCall: string[] = [];
  for (const ownPort of workerPorts) {
    const metrics = await (await fetch(`http://127.0.0.1:${ownPort}/metrics`)).text();
    withoutCall.push(...metrics.split('\n').filter((line) => line.startsWith('callback_delivery_jobs_without_call_total{')));
  }
  process.stdout.write(`jobs without a call: ${withoutCall.map((line) => line.replace('callback_delivery_jobs_without_call_total', '')).join(', ') || 'none'}\n`);
  await queues.close();
  await db.end();
  await Promise.all(
    workers.map((worker) => {
      worker.kill('SIGTERM');
      return new Promise((resolve) => worker.once('exit', resolve));
    }),
  );
  receiver.kill('SIGTERM');
  const redis = new Redis(environment.redis.url);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
  // The workers have exited, so nothing holds the database; left behind, it would sit on the server until the next run.
  await dropDatabase();
}

main().catch((error: unknown) => {
  process.stderr.write(`worker-profile: ${error instanceof Error ? error.stack : String(error)}\n`);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
