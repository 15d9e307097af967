import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from './apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS, setCallbackSettings, type TestAccount } from './fixtures';
import type { IsolatedNamespace } from './isolated-namespace';
import { TestReceiver } from './receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const XSS = '<img src=x onerror=alert(1)>';
export const XSS_EVENT_ID = 'console-xss-1';

/**
 * What the console's browser test looks at, made through the real apps: config-api, ingest and a delivery
 * worker on the suite's own database and Redis prefix, and loopback receivers.
 * - healthy: receiver answers 200; 60 events plus one whose nick_name is HTML, all delivered; a bot webhook
 *   with one recorded message-trigger call;
 * - broken: receiver always answers 500; 3 events failed, breaker open;
 * - flaky: receiver answers 503 until `flakyReceiver` is switched; 3 events failed;
 * - quiet: receiver answers 200, no events (its endpoint is disabled by hand in the test).
 */
export class ConsoleScenario {
  configApi!: RunningApp;
  ingest!: RunningApp;
  worker!: RunningApp;
  healthy!: TestAccount;
  broken!: TestAccount;
  flaky!: TestAccount;
  quiet!: TestAccount;
  flakyReceiver!: TestReceiver;
  healthyEvents: string[] = [];
  brokenEvents: string[] = [];
  flakyEvents: string[] = [];
  private readonly receivers: TestReceiver[] = [];

  constructor(private readonly namespace: IsolatedNamespace) {}

  async start(): Promise<void> {
    await this.namespace.setUp();
    const overrides = this.namespace.overrides;
    this.configApi = await startApp(ConfigApiModule, overrides);
    this.ingest = await startApp(IngestModule, overrides);
    this.worker = await startApp(DeliveryWorkerModule, { ...overrides, RETRY_SCHEDULE: '100ms,100ms', DELIVERY_TIMEOUT_MS: '2000', BREAKER_COOLDOWN: '1s', RECONCILE_INTERVAL: '1m' });

    this.healthy = await this.pushingTo(await this.receiver(200, 'ok'));
    this.broken = await this.pushingTo(await this.receiver(500, 'receiver is down'));
    this.flakyReceiver = await this.receiver(503, 'maintenance');
    this.flaky = await this.pushingTo(this.flakyReceiver);
    this.quiet = await this.pushingTo(await this.receiver(200, 'ok'));

    const actions = ['Customer_create', 'Customer_update', 'Organization_create'] as const;
    this.healthyEvents = await this.ingestEvents(
      this.healthy.id,
      Array.from({ length: 60 }, (_, index) => ({ action: actions[index % 3], message: structuredClone(SAMPLE_MESSAGES[actions[index % 3]]) })),
    );
    const xssMessage = { ...structuredClone(SAMPLE_MESSAGES.Customer_create), nick_name: XSS };
    this.healthyEvents.push(...(await this.ingestEvents(this.healthy.id, [{ action: 'Customer_create', message: xssMessage, event_id: XSS_EVENT_ID }])));
    this.brokenEvents = await this.ingestEvents(this.broken.id, [
      { action: 'Customer_update', message: structuredClone(SAMPLE_MESSAGES.Customer_update) },
      { action: 'Customer_update', message: structuredClone(SAMPLE_MESSAGES.Customer_update) },
      { action: 'ImSubSession_create', message: structuredClone(SAMPLE_MESSAGES.ImSubSession_create) },
    ]);
    this.flakyEvents = await this.ingestEvents(
      this.flaky.id,
      Array.from({ length: 3 }, () => ({ action: 'Organization_update', message: structuredClone(SAMPLE_MESSAGES.Organization_update) })),
    );
    await this.settled(this.healthyEvents, ['delivered']);
    await this.settled([...this.brokenEvents, ...this.flakyEvents], ['failed']);
    await this.botCall();
  }

  async stop(): Promise<void> {
    await this.worker?.close();
    await this.ingest?.close();
    await this.configApi?.close();
    await Promise.all(this.receivers.map((started) => started.stop()));
    await this.namespace.tearDown();
  }

  async admin(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Json; headers: Headers }> {
    const response = await fetch(`${this.configApi.url}${path}`, { method, headers: ADMIN_HEADERS, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
  }

  /** Waits until every event has one of `statuses`, read through the admin API. */
  async settled(eventIds: string[], statuses: string[]): Promise<void> {
    const statusesNow = () => Promise.all(eventIds.map(async (eventId) => (await this.admin('GET', `/admin/v1/events/${encodeURIComponent(eventId)}`)).body.status as string));
    await waitFor(`events to reach ${statuses.join('/')}`, async () => (await statusesNow()).every((status) => statuses.includes(status)), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
  }

  private async receiver(status: number, body: string): Promise<TestReceiver> {
    const started = await new TestReceiver().respondStatus(status, { 'content-type': 'text/plain' }, body).start();
    this.receivers.push(started);
    return started;
  }

  private async pushingTo(target: TestReceiver): Promise<TestAccount> {
    const account = await createAccount(this.configApi, { name: `console ${target.url}` });
    await setCallbackSettings(this.worker.app, account.id, { pushUrl: target.url, contentType: 'JSON', permissions: 'all' });
    return account;
  }

  private async ingestEvents(accountId: number, events: { action: string; message: Json; event_id?: string }[]): Promise<string[]> {
    const response = await fetch(`${this.ingest.url}/v1/events/batch`, {
      method: 'POST',
      headers: INGEST_HEADERS,
      body: JSON.stringify({ events: events.map((event) => ({ account_id: accountId, ...event })) }),
    });
    const body = (await response.json()) as Json;
    if (response.status !== 202 && response.status !== 207) throw new Error(`ingest answered ${response.status}: ${JSON.stringify(body)}`);
    return (body.results as Json[]).sort((a, b) => a.index - b.index).map((result) => result.event_id as string);
  }

  /** A bot webhook and one recorded call through the real ingest bot API. */
  private async botCall(): Promise<void> {
    const bot = await new TestReceiver()
      .respondWith((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answerContent: 'Parcel leaves today' }));
      })
      .start();
    this.receivers.push(bot);
    const created = await this.admin('POST', `/admin/v1/accounts/${this.healthy.id}/bot-webhooks`, { name: 'faq-bot', type: 'message_trigger', url: bot.url, key: 'bot-key-0123' });
    if (created.status !== 201) throw new Error(`creating the bot webhook answered ${created.status}`);
    const call = await fetch(`${this.ingest.url}/v1/bot/message-trigger`, {
      method: 'POST',
      headers: INGEST_HEADERS,
      body: JSON.stringify({ account_id: this.healthy.id, integration_name: 'faq-bot', regex: '.*', questionContent: 'Where is my parcel?' }),
    });
    if (call.status !== 200) throw new Error(`the bot call answered ${call.status}`);
  }
}
