import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { Client } from 'pg';
import { BenchAccounts } from './support/bench-accounts';
import { prepareEnvironment } from './support/bench-environment';
import { ProcessSupervisor } from './support/process-supervisor';
import { ServiceStack } from './support/service-stack';

/**
 * `npm run bench:requeue`: CONTRACT §10 at full size. One account's history of REQUEUE_SCALE_EVENTS
 * (default 1,000,000) delivered events is redelivered by one bulk call, to a receiver that answers in
 * 20 ms, while a second account sends one event every 500 ms to a receiver of its own. Every second it
 * samples Redis's memory, the queue's depth and the task's progress; at the end it says how high each
 * went, how far the task got, and how long the quiet account's events took from POST to arrival. Runs
 * for REQUEUE_SCALE_SECONDS (default 180) or until the task is done, in a database of its own.
 */
const EVENTS = Number(process.env.REQUEUE_SCALE_EVENTS ?? 1_000_000);
const SECONDS = Number(process.env.REQUEUE_SCALE_SECONDS ?? 180);
const BOUND = Number(process.env.REQUEUE_MAX_WAITING ?? 10_000);
const SEED_CHUNK = 100_000;

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function percentile(sorted: number[], share: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))];
}

/** A receiver on loopback answering 200 after `delayMs`, calling `seen` with each body. */
async function receiver(delayMs: number, seen: (body: string) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen(Buffer.concat(chunks).toString('utf8'));
      setTimeout(() => response.writeHead(200).end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, server };
}

/** The account's history as ingest and a worker would have left it: events keyed, each delivered once, books kept. */
async function seedHistory(databaseUrl: string, accountId: number): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    for (let from = 0; from < EVENTS; from += SEED_CHUNK) {
      const to = Math.min(EVENTS, from + SEED_CHUNK);
      await db.query(
        `WITH keyed AS (
           INSERT INTO event_keys (event_id, account_id, event_seq)
           SELECT 'rq_' || i, $1, next_event_seq() FROM generate_series($2::int, $3::int - 1) AS i
           RETURNING event_id, event_seq
         ),
         stored AS (
           INSERT INTO events (seq, event_id, account_id, action, message, created_at)
           SELECT event_seq, event_id, $1, 'Customer_update', json_build_object('id', substr(event_id, 4)::int % 5000, 'nick_name', 'nick'), now()
             FROM keyed
           RETURNING seq, created_at
         ),
         delivered AS (
           INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts, delivered_at)
           SELECT seq, 'primary', $1, 'delivered', 1, 0, 1, now() FROM stored
           RETURNING event_seq
         )
         INSERT INTO book_entries (account_id, created_at, to_status, delivered_at)
         SELECT $1, created_at, 'delivered', now() FROM stored`,
        [accountId, from, to],
      );
      say(`  seeded ${to.toLocaleString('en-US')} events`);
    }
    await db.query('ANALYZE events; ANALYZE deliveries');
  } finally {
    await db.end();
  }
}

async function main(): Promise<void> {
  const supervisor = new ProcessSupervisor();
  try {
    const environment = await prepareEnvironment(supervisor);
    const stack = new ServiceStack(supervisor, environment, { env: { REQUEUE_MAX_WAITING: String(BOUND) }, profileDir: null });
    const [configApi, ingest] = [await stack.start('config-api'), await stack.start('ingest')];
    await stack.start('delivery-worker');
    const accounts = new BenchAccounts(configApi.url, environment.adminToken, environment.runId);

    let busyCalls = 0;
    const sentAt = new Map<string, number>();
    const quietLatencies: number[] = [];
    const busyReceiver = await receiver(20, () => {
      busyCalls += 1;
    });
    const quietReceiver = await receiver(0, (body) => {
      // The callback is {action, message}: the event names itself in the message's nick_name.
      const id = /quiet-\d+/.exec(body)?.[0];
      const started = id === undefined ? undefined : sentAt.get(id);
      if (started !== undefined) quietLatencies.push(performance.now() - started);
    });
    const busy = await accounts.create('busy', busyReceiver.url);
    const quiet = await accounts.create('quiet', quietReceiver.url);

    say(`seeding ${EVENTS.toLocaleString('en-US')} delivered events of account ${busy}`);
    const seedStarted = performance.now();
    await seedHistory(environment.databaseUrl, busy);
    say(`  ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`);

    const redis = new Redis(environment.redisUrl);
    const usedMemory = async (): Promise<number> => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? Number.NaN);
    const memoryBefore = await usedMemory();
    const started = await accounts.admin('POST', `/accounts/${busy}/redeliver`, { status: 'delivered' });
    const taskId = String(started.task_id);
    say(`bulk redelivery of ${String(started.count)} events started (task ${taskId}); REQUEUE_MAX_WAITING ${BOUND}`);

    let peakMemory = memoryBefore;
    let peakWaiting = 0;
    let peakActive = 0;
    let done = 0;
    let sent = 0;
    const refused: string[] = [];
    const began = performance.now();
    const quietSender = setInterval(() => {
      const id = `quiet-${sent++}`;
      sentAt.set(id, performance.now());
      void fetch(`${ingest.url}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${environment.ingestToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ account_id: quiet, action: 'Customer_create', event_id: id, message: { id: sent, nick_name: id } }),
      }).then(
        async (response) => {
          if (response.status !== 202) refused.push(`HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
          else await response.body?.cancel();
        },
        (error: unknown) => refused.push(String(error)),
      );
    }, 500);
    while ((performance.now() - began) / 1000 < SECONDS && done < EVENTS) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const queue = await accounts.admin('GET', '/queue');
      const waiting = Number(queue.waiting) + Number(queue.delayed);
      const memory = await usedMemory();
      done = Number((await accounts.admin('GET', `/redeliveries/${taskId}`)).done);
      peakMemory = Math.max(peakMemory, memory);
      peakWaiting = Math.max(peakWaiting, waiting);
      peakActive = Math.max(peakActive, Number(queue.active));
      const second = Math.round((performance.now() - began) / 1000);
      if (second % 10 === 0) say(`  ${second} s: re-queued ${done.toLocaleString('en-US')}, calls ${busyCalls.toLocaleString('en-US')}, waiting ${waiting}, active ${String(queue.active)}, Redis ${(memory / 1e6).toFixed(1)} MB`);
    }
    clearInterval(quietSender);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const elapsed = (performance.now() - began) / 1000;
    const latencies = [...quietLatencies].sort((a, b) => a - b);
    say('');
    say(`| figure | value |`);
    say(`|---|---|`);
    say(`| events re-queued in ${elapsed.toFixed(0)} s | ${done.toLocaleString('en-US')} of ${EVENTS.toLocaleString('en-US')} (${(done / elapsed).toFixed(0)}/s; receiver calls ${busyCalls.toLocaleString('en-US')}) |`);
    say(`| most jobs waiting (not yet taken) at once | ${peakWaiting.toLocaleString('en-US')} (REQUEUE_MAX_WAITING ${BOUND.toLocaleString('en-US')}, plus the quiet account's) |`);
    say(`| most jobs active (taken by the worker) at once | ${peakActive.toLocaleString('en-US')} |`);
    say(`| Redis used_memory | ${(memoryBefore / 1e6).toFixed(1)} MB before, ${(peakMemory / 1e6).toFixed(1)} MB at most |`);
    say(`| quiet account: events arrived | ${latencies.length} of ${sent}${refused.length > 0 ? `; ${refused.length} refused, first: ${refused[0]}` : ''} |`);
    say(`| quiet account: POST to arrival p50 / p99 / max | ${percentile(latencies, 0.5).toFixed(0)} / ${percentile(latencies, 0.99).toFixed(0)} / ${(latencies.at(-1) ?? Number.NaN).toFixed(0)} ms |`);
    redis.disconnect();
    busyReceiver.server.close();
    quietReceiver.server.close();
  } finally {
    await supervisor.shutdown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
