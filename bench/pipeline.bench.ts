import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { Agent, request } from 'undici';
import { PERMISSION_KEYS } from '@app/payloads';
import { runMigrations } from '@app/persistence';
import { configureHttpApp } from '@app/runtime';
import { openApiQuery } from '@app/signing';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../apps/ingest/src/ingest.module';
import { SAMPLE_MESSAGES } from '../test/support/sample-messages';

export interface PipelineResult {
  events: number;
  endpointConcurrency: number;
  pipelineEventsPerSecond: number;
  directPostsPerSecond: number;
  /** pipeline time per event ÷ direct POST time per event, same receiver, same concurrency. */
  ratio: number;
  ingestAcceptedPerSecond: number;
}

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const INGEST_TOKEN = 'bench-ingest-token-0123456789';

async function listen(app: INestApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startApp(rootModule: Type<unknown>): Promise<{ app: INestApplication; url: string }> {
  const app = await NestFactory.create<NestExpressApplication>(rootModule, { bodyParser: false, logger: false });
  configureHttpApp(app);
  return { app, url: await listen(app) };
}

async function json(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const response = await fetch(url, init);
  if (response.status >= 300) throw new Error(`${url.split('?')[0]} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** A receiver that answers 200 at once and counts what it got. */
function countingReceiver(): { server: Server; count: () => number } {
  let received = 0;
  const server = createServer((incoming, response) => {
    incoming.resume();
    incoming.on('end', () => {
      received += 1;
      response.writeHead(200).end();
    });
  });
  return { server, count: () => received };
}

async function directPosts(url: string, total: number, concurrency: number, body: string): Promise<number> {
  const agent = new Agent({ connections: concurrency });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next += 1;
        const response = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
        await response.body.dump();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return total / seconds;
}

/**
 * End to end on this machine: events posted to ingest in batches, through PostgreSQL, BullMQ and the
 * worker, to a local receiver; against the baseline of the same receiver called directly with the same
 * per-endpoint concurrency. Uses its own database and Redis prefix, removed afterwards.
 */
export async function runPipelineBenchmark(total = 3000): Promise<PipelineResult> {
  const runId = `${Date.now().toString(36)}_${process.pid}`;
  const base = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const databaseUrl = new URL(base);
  databaseUrl.pathname = `/callbacks_bench_${runId}`;
  const endpointConcurrency = 10;
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl.toString(),
    REDIS_PREFIX: `cbbench_${runId}`,
    ADMIN_TOKEN,
    INGEST_TOKEN,
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '50',
    ENDPOINT_CONCURRENCY: String(endpointConcurrency),
    DATABASE_POOL_SIZE: '20',
  });
  await runMigrations(databaseUrl.toString());
  const receiver = countingReceiver();
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  const apps: INestApplication[] = [];
  try {
    const configApi = await startApp(ConfigApiModule);
    const ingest = await startApp(IngestModule);
    apps.push(configApi.app, ingest.app);
    const account = await json(`${configApi.url}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench-${runId}@example.com` }),
    });
    const credentials = { email: String(account.email), openApiToken: String(account.open_api_token) };
    const openApi = (operation: string, body: unknown) =>
      json(`${configApi.url}/open_api_v1/${operation}?${new URLSearchParams(openApiQuery(credentials)).toString()}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await openApi('set_url', { push_url: receiverUrl });
    await openApi('set_permissions', { permissions: Object.fromEntries(PERMISSION_KEYS.map((key) => [key, true])) });
    await openApi('set_push_content_type', { push_content_type: 'JSON' });

    // Ingest first with no worker running, so acceptance speed is measured on its own.
    const batchSize = 500;
    const acceptStarted = performance.now();
    for (let offset = 0; offset < total; offset += batchSize) {
      const events = Array.from({ length: Math.min(batchSize, total - offset) }, (_, index) => ({
        account_id: account.id,
        action: 'Customer_create',
        message: { ...SAMPLE_MESSAGES.Customer_create, id: offset + index + 1 },
      }));
      await json(`${ingest.url}/v1/events/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      });
    }
    const ingestAcceptedPerSecond = total / ((performance.now() - acceptStarted) / 1000);

    const deliverStarted = performance.now();
    const worker = await startApp(DeliveryWorkerModule);
    apps.push(worker.app);
    const deadline = Date.now() + 300_000;
    while (receiver.count() < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (receiver.count() < total) throw new Error(`only ${receiver.count()} of ${total} callbacks arrived within 5 minutes`);
    const pipelineEventsPerSecond = total / ((performance.now() - deliverStarted) / 1000);

    const body = JSON.stringify({ action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create });
    const directPostsPerSecond = await directPosts(receiverUrl, total, endpointConcurrency, body);
    return {
      events: total,
      endpointConcurrency,
      pipelineEventsPerSecond,
      directPostsPerSecond,
      ratio: directPostsPerSecond / pipelineEventsPerSecond,
      ingestAcceptedPerSecond,
    };
  } finally {
    for (const app of apps.reverse()) await app.close();
    receiver.server.closeAllConnections();
    receiver.server.close();
    const client = new Client({ connectionString: base });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${databaseUrl.pathname.slice(1)}" WITH (FORCE)`);
    await client.end();
  }
}
