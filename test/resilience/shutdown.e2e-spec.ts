import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { type RunningApp, startApp } from '../support/apps';
import { type BuiltAppName, spawnBuiltApp } from '../support/built-app';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { TestReceiver } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { TcpProxy } from '../support/tcp-proxy';
import { freePort, waitFor } from '@app/testing';
import { adminCall } from '../support/admin-client';
import { attemptRows, deliveryQueueOf, eventRow, sendEvents, useOwnRedisPrefix } from '../support/worker-process';
import { storeEventsFor } from '../support/deliveries';
import { firstDeliveryStep } from '@app/runtime';
import { DataSource } from 'typeorm';

useOwnRedisPrefix('shutdown');
// Real processes start (a few seconds each on a busy machine) and are stopped several times.
jest.setTimeout(180_000);

/** What the issue and the drills hold every process to. */
const EXIT_LIMIT_MS = 10_000;
const APPS: BuiltAppName[] = ['config-api', 'ingest', 'delivery-worker'];

function withPort(url: string, port: number): string {
  const changed = new URL(url);
  changed.hostname = '127.0.0.1';
  changed.port = String(port);
  return changed.toString();
}

describe('every app exits promptly on SIGTERM, whatever the state of PostgreSQL and Redis', () => {
  const databaseUrl = process.env.DATABASE_URL ?? '';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

  describe.each(APPS)('%s', (app) => {
    it('with Redis at a closed port, once it listens', async () => {
      const running = spawnBuiltApp(app, { REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
      await running.waitForOutput('listening on http://');
      expect(running.child.exitCode).toBeNull();
      const { ms } = await running.terminate(EXIT_LIMIT_MS + 5000);
      expect(ms).toBeLessThan(EXIT_LIMIT_MS);
    });

    it('with PostgreSQL at a closed port, while it starts', async () => {
      const running = spawnBuiltApp(app, { DATABASE_URL: withPort(databaseUrl, await freePort()) });
      // Start-up logs are buffered until the app is created, so there is nothing to wait for; an app that
      // cannot reach PostgreSQL gives up by itself after its connection retries, hence the early signal.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(running.child.exitCode).toBeNull();
      const { ms } = await running.terminate(EXIT_LIMIT_MS + 5000);
      expect(ms).toBeLessThan(EXIT_LIMIT_MS);
    });

    it('with PostgreSQL accepting connections but never answering, while it starts', async () => {
      let connections = 0;
      const silent = createServer(() => (connections += 1));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const running = spawnBuiltApp(app, { DATABASE_URL: withPort(databaseUrl, (silent.address() as AddressInfo).port) });
        // Connected, and waiting for an answer that never comes (DATABASE_CONNECT_TIMEOUT_MS, then again): still starting.
        // A deadline for a loaded machine, where starting the process alone took 13 s (seen at load 29).
        await waitFor('the app to connect to the silent PostgreSQL', () => connections > 0, { timeoutMs: 60_000 });
        expect(running.child.exitCode).toBeNull();
        const { ms } = await running.terminate(EXIT_LIMIT_MS + 5000);
        expect(ms).toBeLessThan(EXIT_LIMIT_MS);
      } finally {
        silent.close();
      }
    });

    it('after PostgreSQL and Redis went away while it ran (reconnecting)', async () => {
      const postgres = await new TcpProxy('127.0.0.1', Number(new URL(databaseUrl).port || 5432)).start();
      const redis = await new TcpProxy(new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379)).start();
      const running = spawnBuiltApp(app, { DATABASE_URL: withPort(databaseUrl, postgres.port), REDIS_URL: withPort(redisUrl, redis.port) });
      try {
        await running.waitForOutput(app === 'delivery-worker' ? 'consuming deliveries' : 'listening on http://');
        await Promise.all([postgres.cut(), redis.cut()]);
        // Let the clients notice and start reconnecting.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(running.child.exitCode).toBeNull();
        const { ms } = await running.terminate(EXIT_LIMIT_MS + 5000);
        expect(ms).toBeLessThan(EXIT_LIMIT_MS);
      } finally {
        await Promise.all([postgres.cut(), redis.cut()]);
      }
    });
  });

  describe('a worker with a call in flight', () => {
    let configApi: RunningApp;
    const hanging = new TestReceiver().respondWith(() => undefined);

    beforeAll(async () => {
      configApi = await startApp(ConfigApiModule);
      await hanging.start();
    });

    afterAll(async () => {
      await hanging.stop();
      await configApi?.close();
    });

    it('abandons the call within its bound, records the attempt for a retry, and exits', async () => {
      const account = await createAccount(configApi);
      await setCallbackSettings(configApi.app, account.id, { pushUrl: hanging.url, contentType: 'JSON', permissions: 'all' });
      // Without abandoning, the call would hold the worker for 60 s.
      const worker = spawnBuiltApp('delivery-worker', { DELIVERY_TIMEOUT_MS: '60000', RETRY_SCHEDULE: '1h' });
      await worker.waitForOutput('consuming deliveries');
      const [event] = await sendEvents(configApi.app, account.id, [{ action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create }]);
      await waitFor('the receiver to get the call', () => hanging.requests.length === 1);

      const { ms } = await worker.terminate(EXIT_LIMIT_MS + 5000);
      expect(ms).toBeLessThan(EXIT_LIMIT_MS);
      expect(worker.output()).toMatch(/abandoned 1 callback call\(s\) still waiting for an answer/);
      const row = await eventRow(configApi.app, event.eventId);
      expect(row).toMatchObject({ status: 'retrying', attempts: 1, series_attempts: 1 });
      const [attempt] = await attemptRows(configApi.app, event.eventId);
      expect(attempt).toMatchObject({ attempt: 1, response_status: null, error: 'connection failed: abandoned: the worker shut down before the receiver answered' });
      // The same bytes, signed, were sent: a retry carries the same webhook-id.
      expect(hanging.requests[0].headers['webhook-id']).toBe(event.eventId);
    });

    it('abandons a send to another destination the same way', async () => {
      const account = await createAccount(configApi);
      const created = await adminCall(configApi, 'POST', `/admin/v1/accounts/${account.id}/destinations`, { type: 'webhook', target: hanging.url });
      expect(created.status).toBe(201);
      const destinationId = created.body.id as string;
      // The account's permission lets the action through to every destination (its primary has no push URL: no_endpoint).
      await setCallbackSettings(configApi.app, account.id, { permissions: 'all' });
      const worker = spawnBuiltApp('delivery-worker', { DELIVERY_TIMEOUT_MS: '60000', RETRY_SCHEDULE: '1h' });
      await worker.waitForOutput('consuming deliveries');
      // The delivery as ingest stores it (ingest is not running here): its statement, the destination
      // taking the event, then the first step's job of the delivery it stored queued.
      const [event] = await storeEventsFor(configApi.app, account.id, [{ action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create }], [destinationId]);
      expect(event.queued).toEqual([destinationId]);
      const dataSource = configApi.app.get(DataSource);
      const before = hanging.requests.length;
      await deliveryQueueOf(configApi.app).addBulk([firstDeliveryStep(event.seq, account.id, destinationId)]);
      await waitFor('the destination to get the call', () => hanging.requests.length === before + 1);

      const { ms } = await worker.terminate(EXIT_LIMIT_MS + 5000);
      expect(ms).toBeLessThan(EXIT_LIMIT_MS);
      expect(worker.output()).toMatch(/abandoned 1 callback call\(s\) still waiting for an answer/);
      const [delivery] = await dataSource.query<Array<{ status: string; attempts: number }>>(
        'SELECT status, attempts FROM deliveries WHERE event_seq = $1 AND destination_id = $2',
        [event.seq, destinationId],
      );
      expect(delivery).toEqual({ status: 'retrying', attempts: 1 });
      const attempts = await dataSource.query<Array<{ error: string; response_status: number | null }>>(
        'SELECT error, response_status FROM delivery_attempts WHERE event_seq = $1 AND destination_id = $2',
        [event.seq, destinationId],
      );
      // One pipeline for every destination: the same words as the primary's abandoned attempt.
      expect(attempts).toEqual([{ error: 'connection failed: abandoned: the worker shut down before the receiver answered', response_status: null }]);
    });
  });
});
