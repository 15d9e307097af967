import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IsolatedNamespace } from './isolated-namespace';
import { type RunningApp, startApp } from './apps';
import { createAccount, setCallbackSettings } from './fixtures';
import { TestReceiver } from './receiver';
import { waitFor } from '@app/testing';
import type { StoredTestEvent } from './worker-process';

/** A new account whose endpoint is a receiver answering `status` to every call; the receiver joins `receivers` for the caller to stop. */
export async function accountAnswering(configApi: RunningApp, worker: RunningApp, receivers: TestReceiver[], status: number): Promise<number> {
  const receiver = await new TestReceiver().respondStatus(status).start();
  receivers.push(receiver);
  const account = await createAccount(configApi);
  await setCallbackSettings(worker.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
  return account.id;
}

/** Waits until every one of `events` reached delivered, failed or filtered. */
export async function settled(namespace: IsolatedNamespace, events: StoredTestEvent[]): Promise<void> {
  await waitFor('events to settle', async () => {
    const { rows } = await namespace.db.query<{ status: string }>(`SELECT status FROM deliveries WHERE event_seq = ANY($1::bigint[]) AND destination_id = 'primary'`, [
      events.map((event) => event.seq),
    ]);
    return rows.length === events.length && rows.every((row) => ['delivered', 'failed', 'filtered'].includes(row.status));
  });
}

/**
 * A config API and a worker on `namespace`'s own database, the worker retrying at once and never opening
 * its breaker, so a receiver answering 500 settles its events as failed within a second.
 */
export async function startStatsApps(namespace: IsolatedNamespace): Promise<{ configApi: RunningApp; worker: RunningApp }> {
  const configApi = await startApp(ConfigApiModule, namespace.overrides);
  const worker = await startApp(DeliveryWorkerModule, {
    ...namespace.overrides,
    RETRY_SCHEDULE: '100ms',
    DELIVERY_TIMEOUT_MS: '1000',
    RECONCILE_INTERVAL: '1m',
    BREAKER_FAILURE_THRESHOLD: '100',
  });
  return { configApi, worker };
}

export interface StatsSuite {
  namespace: IsolatedNamespace;
  /** Receivers the suite's tests start; stopped after the suite. */
  receivers: TestReceiver[];
  configApi: RunningApp;
  worker: RunningApp;
}

/**
 * Registers a stats suite's set-up and tear-down: its own database (the all-accounts figures must hold
 * exactly its events) and the stats apps on it. The apps are there once the suite's tests run.
 */
export function useStatsApps(name: string): StatsSuite {
  const suite = { namespace: new IsolatedNamespace(name), receivers: [] as TestReceiver[] } as StatsSuite;
  beforeAll(async () => {
    await suite.namespace.setUp();
    Object.assign(suite, await startStatsApps(suite.namespace));
  });
  afterAll(async () => {
    await suite.worker?.close();
    await suite.configApi?.close();
    await Promise.all(suite.receivers.map((receiver) => receiver.stop()));
    await suite.namespace.tearDown();
  });
  return suite;
}
