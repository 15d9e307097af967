import { DELIVERY_STAGES } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, useApps } from '../support/apps';
import { createAccount, ingestSampleEvent, setCallbackSettings } from '../support/fixtures';
import { type TestReceiver, useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';
import { eventRows, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('stage-stamps');
jest.setTimeout(60_000);

/**
 * callback_stage_seconds{stage} splits one delivery step's time between the stamps on its path (issue
 * 19): one event POSTed to ingest and delivered by the worker to a real receiver moves every stage's
 * count. The apps share this process and so one registry: both /metrics answers are read and summed,
 * as a scrape of separate processes would be.
 */
describe('stage stamps', () => {
  const receivers = useReceivers();
  let receiver: TestReceiver;
  beforeAll(async () => {
    receiver = await receivers();
  });
  const { configApi, ingest, worker } = useApps({ configApi: ConfigApiModule, ingest: IngestModule, worker: DeliveryWorkerModule });

  async function stageCounts(app: RunningApp): Promise<Map<string, number>> {
    const text = await (await fetch(`${app.url}/metrics`)).text();
    return new Map([...text.matchAll(/^callback_stage_seconds_count\{stage="([a-z_]+)"\} (\S+)$/gm)].map(([, stage, value]) => [stage ?? '', Number(value)]));
  }

  it('one delivered event moves the count of every stage, ingest and worker', async () => {
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: 'all' });
    const before = await stageCounts(worker);

    const eventId = await ingestSampleEvent(ingest, account.id);
    await waitFor('the event to be delivered', async () => (await eventRows(worker.app, [eventId]))[0]?.status === 'delivered');
    expect(receiver.requests.length).toBeGreaterThanOrEqual(1);

    const after = await waitFor('every stage to be counted', async () => {
      const counts = await stageCounts(ingest);
      return DELIVERY_STAGES.every((stage) => (counts.get(stage) ?? 0) > (before.get(stage) ?? 0)) ? counts : undefined;
    });
    for (const stage of DELIVERY_STAGES) expect((after.get(stage) ?? 0) - (before.get(stage) ?? 0)).toBeGreaterThanOrEqual(1);
  });
});
