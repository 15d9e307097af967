import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { BACKLOG_EVENTS_METRIC, BACKLOG_OLDEST_DUE_METRIC } from '../../apps/delivery-worker/src/backlog/backlog.metrics';
import { type RunningApp } from '../support/apps';
import { useShardedQueue } from '../support/queue-shards';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import { eventRows, sendEvents } from '../support/worker-process';

/**
 * The worker's autoscaler reads the backlog gauges through Prometheus: they must exist under the names
 * the ScaledObject queries, rise while due events wait, and fall when workers deliver them. Delivery
 * is stopped by a worker that consumes only the other queue shard; a second worker then drains it.
 */
jest.setTimeout(120_000);

const { receiver, configApi, startWorker } = useShardedQueue('backlog-metrics');

/** The metric names the ScaledObject's Prometheus queries read. */
function scaledObjectMetrics(): string[] {
  const manifests = readFileSync(join(__dirname, '..', '..', 'deploy/kubernetes/base/monitoring.yaml'), 'utf8');
  const scaledObject = parseAllDocuments(manifests)
    .map((document) => document.toJS() as { kind: string; spec: { triggers: { metadata: { query: string } }[] } })
    .find((object) => object.kind === 'ScaledObject');
  return (scaledObject?.spec.triggers ?? []).map(({ metadata }) => /\((\w+)\{/.exec(metadata.query)?.[1] ?? metadata.query);
}

async function scrape(worker: RunningApp): Promise<Map<string, number>> {
  const exposition = await (await fetch(`${worker.url}/metrics`)).text();
  return new Map([...exposition.matchAll(/^(callback_backlog_\w+) (\S+)$/gm)].map(([, name, value]) => [name, Number(value)]));
}

it('the gauges the ScaledObject names rise with due events and fall as workers drain them', async () => {
  expect(scaledObjectMetrics().sort()).toEqual([BACKLOG_EVENTS_METRIC, BACKLOG_OLDEST_DUE_METRIC].sort());

  const account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
  // Consumes only the shard this account's jobs do not go to: its events stay due.
  const idle = await startWorker(String(1 - (account.id % 2)));
  expect(await scrape(idle)).toEqual(new Map([[BACKLOG_EVENTS_METRIC, 0], [BACKLOG_OLDEST_DUE_METRIC, 0]]));

  const events = Array.from({ length: 20 }, (_, index) => ({
    action: 'Customer_create',
    message: { ...structuredClone(SAMPLE_MESSAGES.Customer_create), id: index + 1 },
  }));
  const stored = await sendEvents(idle.app, account.id, events);
  const risen = await waitFor('the backlog gauges to count the stored events', async () => {
    const values = await scrape(idle);
    return values.get(BACKLOG_EVENTS_METRIC) === 20 && (values.get(BACKLOG_OLDEST_DUE_METRIC) ?? 0) > 0 && values;
  }, { timeoutMs: 30_000, intervalMs: 500 });
  // Nothing delivers them, so the oldest keeps getting later.
  await waitFor('the oldest due age to grow', async () => {
    const values = await scrape(idle);
    return (values.get(BACKLOG_OLDEST_DUE_METRIC) ?? 0) > (risen.get(BACKLOG_OLDEST_DUE_METRIC) ?? 0) + 1 && values.get(BACKLOG_EVENTS_METRIC) === 20;
  }, { timeoutMs: 30_000, intervalMs: 500 });
  expect((await eventRows(idle.app, stored.map((event) => event.eventId))).every((row) => row.status === 'queued')).toBe(true);

  const draining = await startWorker();
  await waitFor('the events to be delivered', async () =>
    (await eventRows(draining.app, stored.map((event) => event.eventId))).every((row) => row.status === 'delivered'), { timeoutMs: 60_000 });
  await waitFor('the backlog gauges to fall to zero', async () => {
    const values = await scrape(draining);
    return values.get(BACKLOG_EVENTS_METRIC) === 0 && values.get(BACKLOG_OLDEST_DUE_METRIC) === 0;
  }, { timeoutMs: 30_000, intervalMs: 500 });
  expect(new Set(receiver.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(stored.map((event) => event.eventId)));
});
