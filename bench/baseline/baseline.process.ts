import { Queue, Worker } from 'bullmq';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { Agent, request } from 'undici';
import { Batcher, type Settled } from '@app/runtime/async/batcher';

/**
 * The framework-free pipeline the service is measured against, doing the service's work without its
 * framework, checks beyond the token, or logs: a plain node:http ingest (bearer token compared in
 * constant time, parse, multi-row INSERT, one BullMQ add per statement; single events group-committed
 * like the service's) and a plain BullMQ worker (the event row read back by id, grouped; undici POST
 * with a Standard Webhooks signature under the account's own secret; attempt rows and status written
 * in groups, a job acknowledged after its group commits). Grouping is the service's own Batcher with
 * the service's sizes, so the comparison is the work, not the batching.
 */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const prefix = process.env.BASELINE_QUEUE_PREFIX ?? 'bench-baseline';
const queue = new Queue('baseline', { connection, prefix });
const endpoints = new Map<number, string>(Object.entries(JSON.parse(process.env.BASELINE_ENDPOINTS ?? '{}') as Record<string, string>).map(([id, url]) => [Number(id), url]));
/** Each account's signing secret, held decoded as the service's settings cache holds them. */
const secrets = new Map<number, Buffer>([...endpoints.keys()].map((account) => [account, randomBytes(32)]));
const expectedAuthorization = Buffer.from(`Bearer ${process.env.BASELINE_TOKEN ?? ''}`);

interface IncomingEvent {
  account_id: number;
  action: string;
  event_id: string;
  message: Record<string, unknown>;
}

interface DeliveryJob {
  id: string;
}

interface StoredEvent {
  id: string;
  event_id: string;
  account_id: number;
  action: string;
  message: Record<string, unknown>;
}

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    incoming.on('error', reject);
  });
}

function isEvent(value: unknown): value is IncomingEvent {
  const item = value as IncomingEvent;
  return typeof item === 'object' && item !== null && Number.isInteger(item.account_id) && typeof item.action === 'string' && typeof item.message === 'object';
}

function authorized(incoming: IncomingMessage): boolean {
  const given = Buffer.from(incoming.headers.authorization ?? '');
  return given.length === expectedAuthorization.length && timingSafeEqual(given, expectedAuthorization);
}

/** Stores `events` in one statement; per event its row id, or null for a duplicate (the first of two equal ids claims it). */
async function insert(events: IncomingEvent[]): Promise<Array<string | null>> {
  const values = events.map((_, index) => `($${index * 4 + 1}, $${index * 4 + 2}, $${index * 4 + 3}, $${index * 4 + 4})`).join(',');
  const parameters = events.flatMap((event) => [event.event_id, event.account_id, event.action, JSON.stringify(event.message)]);
  const inserted = await pool.query<{ id: string; event_id: string }>(
    `INSERT INTO bench_baseline_events (event_id, account_id, action, message) VALUES ${values} ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id`,
    parameters,
  );
  const ids = new Map(inserted.rows.map((row) => [row.event_id, row.id]));
  return events.map((event) => {
    const id = ids.get(event.event_id) ?? null;
    ids.delete(event.event_id);
    return id;
  });
}

const enqueue = (ids: Array<string | null>) =>
  queue.addBulk(ids.filter((id) => id !== null).map((id) => ({ name: 'deliver', data: { id } satisfies DeliveryJob, opts: { jobId: `e${id}`, removeOnComplete: true, removeOnFail: true } })));

const settled = <O>(values: O[]): Settled<O>[] => values.map((value) => ({ ok: true, value }));

/** Single events: the service's group commit (500 a statement, two statements at once, the queue add beside the next statement). */
const singles = new Batcher<IncomingEvent, string | null>(async (events) => settled(await insert(events)), {
  maxBatch: 500,
  maxInFlight: 2,
  lingerMs: 0,
  afterBatch: async (_, results) => void (await enqueue(results.map((result) => (result.ok ? result.value : null)))),
});

async function ingest(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
  if (!authorized(incoming)) return void response.writeHead(401).end('{"error":"unauthorized"}');
  const parsed: unknown = JSON.parse(await readBody(incoming));
  if (incoming.url === '/events/batch') {
    const events = (parsed as { events?: unknown[] }).events ?? [];
    if (!events.every(isEvent)) return void response.writeHead(422).end('{"error":"invalid"}');
    const ids = await insert(events);
    await enqueue(ids);
    const results = events.map((event, index) => ({ index, event_id: event.event_id, status: ids[index] !== null ? 'accepted' : 'duplicate' }));
    return void response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
  }
  if (!isEvent(parsed)) return void response.writeHead(422).end('{"error":"invalid"}');
  const id = await singles.submit(parsed);
  response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ event_id: parsed.event_id, status: id !== null ? 'accepted' : 'duplicate' }));
}

/** The event rows of many jobs in one statement, as the service's worker loads them. */
const reads = new Batcher<string, StoredEvent>(
  async (ids) => {
    const { rows } = await pool.query<StoredEvent>('SELECT id, event_id, account_id, action, message FROM bench_baseline_events WHERE id = ANY($1::bigint[])', [ids]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id): Settled<StoredEvent> => {
      const row = byId.get(id);
      return row ? { ok: true, value: row } : { ok: false, error: new Error(`event ${id} not found`) };
    });
  },
  { maxBatch: 500, maxInFlight: 2, lingerMs: 0 },
);

/** Attempt rows and status changes of many jobs in one statement, one at a time (the service's outcome writer); each job resolves after the commit. */
const attempts = new Batcher<{ id: string; status: number; durationMs: number }, void>(
  async (batch) => {
    await pool.query(
      `WITH attempts AS (INSERT INTO bench_baseline_attempts (event_id, response_status, duration_ms) SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[]))
       UPDATE bench_baseline_events SET status = 'delivered' WHERE id = ANY($1::bigint[])`,
      [batch.map((item) => item.id), batch.map((item) => item.status), batch.map((item) => item.durationMs)],
    );
    return settled(batch.map(() => undefined));
  },
  { maxBatch: 200, maxInFlight: 1, lingerMs: 0 },
);

function startWorker(): Worker {
  const agent = new Agent({ connections: 10, keepAliveTimeout: 30_000 });
  return new Worker<DeliveryJob>(
    'baseline',
    async (job) => {
      const event = await reads.submit(job.data.id);
      const body = JSON.stringify({ action: event.action, message: event.message });
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', secrets.get(event.account_id) ?? Buffer.alloc(32)).update(`${event.event_id}.${timestamp}.${body}`).digest('base64');
      const started = performance.now();
      const response = await request(endpoints.get(event.account_id) ?? '', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'webhook-id': event.event_id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` },
        dispatcher: agent,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await response.body.dump();
      await attempts.submit({ id: event.id, status: response.statusCode, durationMs: Math.round(performance.now() - started) });
    },
    { connection: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null }), prefix, concurrency: 50 },
  );
}

/**
 * BASELINE_ROLE: `both` (one process ingesting and delivering, the default), `ingest` (stores and
 * enqueues, delivers nothing) or `worker` (delivers what an `ingest` process enqueued; no HTTP server),
 * so the pipeline can also be measured split in two processes as the service is.
 */
const role = process.env.BASELINE_ROLE ?? 'both';
if (!['both', 'ingest', 'worker'].includes(role)) throw new Error(`BASELINE_ROLE: expected both, ingest or worker, got ${role}`);
const worker = role === 'ingest' ? null : startWorker();
const server =
  role === 'worker'
    ? null
    : createServer((incoming, response) => {
        ingest(incoming, response).catch((error: unknown) => {
          if (!response.headersSent) response.writeHead(500).end(JSON.stringify({ error: String(error) }));
        });
      });
if (server) {
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.BASELINE_PORT ?? 0), '127.0.0.1', () => process.send?.({ ready: true }));
} else {
  void worker?.waitUntilReady().then(() => process.send?.({ ready: true }));
}
process.on('disconnect', () => process.exit(0));
process.once('SIGTERM', () => {
  server?.close();
  void Promise.all([worker?.close(), queue.close()]).finally(() => process.exit(0));
});
