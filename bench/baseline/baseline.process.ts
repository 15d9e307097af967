import { Queue, Worker } from 'bullmq';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { Agent, request } from 'undici';

/**
 * The framework-free pipeline the service is measured against: a plain node:http ingest (parse,
 * multi-row INSERT, one BullMQ add per request) and a plain BullMQ worker (undici POST with a
 * Standard Webhooks signature, attempt rows and status written in batches, a job acknowledged after
 * its batch commits). The essential work of the service, without its framework, checks or logs.
 */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const prefix = process.env.BASELINE_QUEUE_PREFIX ?? 'bench-baseline';
const queue = new Queue('baseline', { connection, prefix });
const endpoints = new Map<number, string>(Object.entries(JSON.parse(process.env.BASELINE_ENDPOINTS ?? '{}') as Record<string, string>).map(([id, url]) => [Number(id), url]));
const signingKey = Buffer.from('bench-baseline-signing-key-0123456789');

interface IncomingEvent {
  account_id: number;
  action: string;
  event_id: string;
  message: Record<string, unknown>;
}

interface DeliveryJob {
  id: string;
  eventId: string;
  url: string;
  body: string;
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

async function store(events: IncomingEvent[]): Promise<string[]> {
  const values = events.map((_, index) => `($${index * 4 + 1}, $${index * 4 + 2}, $${index * 4 + 3}, $${index * 4 + 4})`).join(',');
  const parameters = events.flatMap((event) => [event.event_id, event.account_id, event.action, JSON.stringify(event.message)]);
  const inserted = await pool.query<{ id: string; event_id: string }>(
    `INSERT INTO bench_baseline_events (event_id, account_id, action, message) VALUES ${values} ON CONFLICT (event_id) DO NOTHING RETURNING id, event_id`,
    parameters,
  );
  const byId = new Map(events.map((event) => [event.event_id, event]));
  const jobs = inserted.rows.map((row) => {
    const event = byId.get(row.event_id) as IncomingEvent;
    const data: DeliveryJob = { id: row.id, eventId: row.event_id, url: endpoints.get(event.account_id) ?? '', body: JSON.stringify({ action: event.action, message: event.message }) };
    return { name: 'deliver', data, opts: { jobId: `e${row.id}`, removeOnComplete: true, removeOnFail: true } };
  });
  await queue.addBulk(jobs);
  return inserted.rows.map((row) => row.event_id);
}

async function ingest(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
  const parsed: unknown = JSON.parse(await readBody(incoming));
  if (incoming.url === '/events/batch') {
    const events = (parsed as { events?: unknown[] }).events ?? [];
    if (!events.every(isEvent)) return void response.writeHead(422).end('{"error":"invalid"}');
    const stored = new Set(await store(events));
    const results = events.map((event, index) => ({ index, event_id: event.event_id, status: stored.has(event.event_id) ? 'accepted' : 'duplicate' }));
    return void response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
  }
  if (!isEvent(parsed)) return void response.writeHead(422).end('{"error":"invalid"}');
  await store([parsed]);
  response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ event_id: parsed.event_id, status: 'accepted' }));
}

/** Attempt rows and status changes of many jobs in one statement; each job resolves after the commit. */
class AttemptBatcher {
  private pending: Array<{ id: string; status: number; durationMs: number; done: (error?: unknown) => void }> = [];
  private timer: NodeJS.Timeout | null = null;

  record(id: string, status: number, durationMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, status, durationMs, done: (error) => (error === undefined ? resolve() : reject(error instanceof Error ? error : new Error('attempt batch failed'))) });
      if (this.pending.length >= 100) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), 5);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    pool
      .query(
        `WITH attempts AS (INSERT INTO bench_baseline_attempts (event_id, response_status, duration_ms) SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[]))
         UPDATE bench_baseline_events SET status = 'delivered' WHERE id = ANY($1::bigint[])`,
        [batch.map((item) => item.id), batch.map((item) => item.status), batch.map((item) => item.durationMs)],
      )
      .then(
        () => batch.forEach((item) => item.done()),
        (error: unknown) => batch.forEach((item) => item.done(error)),
      );
  }
}

function startWorker(): Worker {
  const agent = new Agent({ connections: 10, keepAliveTimeout: 30_000 });
  const attempts = new AttemptBatcher();
  return new Worker<DeliveryJob>(
    'baseline',
    async (job) => {
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', signingKey).update(`${job.data.eventId}.${timestamp}.${job.data.body}`).digest('base64');
      const started = performance.now();
      const response = await request(job.data.url, {
        method: 'POST',
        body: job.data.body,
        headers: { 'content-type': 'application/json', 'webhook-id': job.data.eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` },
        dispatcher: agent,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await response.body.dump();
      await attempts.record(job.data.id, response.statusCode, Math.round(performance.now() - started));
    },
    { connection: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null }), prefix, concurrency: 50 },
  );
}

const server = createServer((incoming, response) => {
  ingest(incoming, response).catch((error: unknown) => {
    if (!response.headersSent) response.writeHead(500).end(JSON.stringify({ error: String(error) }));
  });
});
server.keepAliveTimeout = 60_000;
const worker = process.env.BASELINE_WORKER === 'false' ? null : startWorker();
server.listen(Number(process.env.BASELINE_PORT ?? 0), '127.0.0.1', () => process.send?.({ ready: true }));
process.on('disconnect', () => process.exit(0));
process.once('SIGTERM', () => {
  server.close();
  void Promise.all([worker?.close(), queue.close()]).finally(() => process.exit(0));
});
