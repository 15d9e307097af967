import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { type BuiltAppProcess, spawnBuiltApp } from '../support/built-app';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS, setCallbackSettings } from '../support/fixtures';
import { TestReceiver } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { freePort, waitFor } from '@app/testing';
import { useOwnRedisPrefix } from '../support/worker-process';

/**
 * One trace from the domain service's request to the callback: ingest and the worker run as separate
 * built processes exporting OTLP/HTTP (JSON) to a collector this test serves on loopback. The event's
 * request carries a W3C traceparent; every span of ingest and of the worker must land in that trace,
 * parented step by step (request → validate/store/enqueue → take → admit/call/record), and the callback
 * carries the call span as its traceparent (CALLBACK_TRACEPARENT=true).
 */
useOwnRedisPrefix('tracing');
jest.setTimeout(180_000);

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
}

interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string; name: string }[] }[];
  }[];
}

/** A minimal OTLP/HTTP collector: POST /v1/traces with a JSON body, answered 200 {}. */
class OtlpCollector {
  readonly spans: ExportedSpan[] = [];
  readonly paths: string[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.paths.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const { resource, scopeSpans } of body.resourceSpans ?? []) {
          const service = resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';
          for (const { spans } of scopeSpans) {
            for (const span of spans) this.spans.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name });
          }
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const collector = new OtlpCollector();
const receiver = new TestReceiver();
let configApi: RunningApp;
const processes: BuiltAppProcess[] = [];

function randomHex(bytes: number): string {
  return Buffer.from(Array.from({ length: bytes }, () => Math.floor(Math.random() * 256))).toString('hex');
}

const PORT_VARIABLES = { 'config-api': 'CONFIG_API_PORT', ingest: 'INGEST_PORT', 'delivery-worker': 'WORKER_PORT' } as const;

async function started(app: keyof typeof PORT_VARIABLES): Promise<string> {
  const port = await freePort();
  const running = spawnBuiltApp(app, {
    [PORT_VARIABLES[app]]: String(port),
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    // Export within a fraction of a second instead of the SDK's 5 s batches.
    OTEL_BSP_SCHEDULE_DELAY: '100',
    CALLBACK_TRACEPARENT: 'true',
  });
  processes.push(running);
  await running.waitForOutput(`listening on http://127.0.0.1:${port}`, 90_000);
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  await collector.start();
  await receiver.start();
  configApi = await startApp(ConfigApiModule);
});

afterAll(async () => {
  for (const running of processes) await running.terminate(15_000);
  await configApi?.close();
  await receiver.stop();
  await collector.stop();
});

it('one trace spans the caller, ingest (fast path and Nest path) and the worker for each event', async () => {
  const account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
  const ingestUrl = await started('ingest');
  await started('delivery-worker');

  // The plain path is served ahead of Express; a query string sends the same request through Nest.
  for (const path of ['/v1/events', '/v1/events?via=nest']) {
    const traceId = randomHex(16);
    const callerSpanId = randomHex(8);
    const eventId = `trace-${randomHex(6)}`;
    const answer = await fetch(`${ingestUrl}${path}`, {
      method: 'POST',
      headers: { ...INGEST_HEADERS, traceparent: `00-${traceId}-${callerSpanId}-01` },
      body: JSON.stringify({ account_id: account.id, event_id: eventId, action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create }),
    });
    expect(answer.status).toBe(202);

    const callback = await waitFor(`the callback of ${path}`, () => receiver.requests.find((request) => request.headers['webhook-id'] === eventId), { timeoutMs: 60_000 });
    const names = ['POST /v1/events', 'ingest.validate', 'ingest.store', 'ingest.enqueue', 'delivery.take', 'delivery.admit', 'delivery.call', 'delivery.record'];
    const spans = await waitFor(`every span of ${path} to be exported`, () => {
      const inTrace = collector.spans.filter((span) => span.traceId === traceId);
      return names.every((name) => inTrace.some((span) => span.name === name)) && inTrace;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    const span = (name: string): ExportedSpan => spans.find((candidate) => candidate.name === name) as ExportedSpan;

    expect(span('POST /v1/events')).toMatchObject({ service: 'ingest', parentSpanId: callerSpanId });
    for (const step of ['ingest.validate', 'ingest.store', 'ingest.enqueue']) {
      expect(span(step)).toMatchObject({ service: 'ingest', parentSpanId: span('POST /v1/events').spanId });
    }
    // The job carried the enqueue span's context to the worker, a separate process.
    expect(span('delivery.take')).toMatchObject({ service: 'delivery-worker', parentSpanId: span('ingest.enqueue').spanId });
    for (const step of ['delivery.admit', 'delivery.call', 'delivery.record']) {
      expect(span(step)).toMatchObject({ service: 'delivery-worker', parentSpanId: span('delivery.take').spanId });
    }
    expect(callback.headers.traceparent).toBe(`00-${traceId}-${span('delivery.call').spanId}-01`);
  }
  expect(collector.paths.every((path) => path.startsWith('POST /v1/traces application/json'))).toBe(true);
});

it('an admin call on config-api is a server span named by its route, in the caller\'s trace', async () => {
  const account = await createAccount(configApi);
  const configApiUrl = await started('config-api');
  const traceId = randomHex(16);
  const callerSpanId = randomHex(8);
  const answer = await fetch(`${configApiUrl}/admin/v1/accounts/${account.id}`, { headers: { ...ADMIN_HEADERS, traceparent: `00-${traceId}-${callerSpanId}-01` } });
  expect(answer.status).toBe(200);
  const span = await waitFor('the admin call\'s span', () => collector.spans.find((candidate) => candidate.traceId === traceId), { timeoutMs: 30_000, intervalMs: 200 });
  expect(span).toMatchObject({ service: 'config-api', name: 'GET /admin/v1/accounts/:id', parentSpanId: callerSpanId });
});
