import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DestinationSettingsCache } from '../../apps/delivery-worker/src/delivery/destinations/destination-settings.cache';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { adminCall } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { signedOpenApiCall } from '../support/open-api-client';
import { waitFor } from '@app/testing';

/**
 * A delivery options change reaches a running worker (CONTRACT §9: the options apply to the next call):
 * the worker holds every account's destinations in memory (the options are the primary destination's),
 * and the change makes it drop that account's entry and read the rows afresh. Own database and Redis prefix, so this worker consumes no other suite's events.
 */
const namespace = new IsolatedNamespace('delivery-options-worker');
jest.setTimeout(90_000);

let configApi: RunningApp;
let worker: RunningApp;

beforeAll(async () => {
  await namespace.setUp();
  configApi = await startApp(ConfigApiModule, namespace.overrides);
  worker = await startApp(DeliveryWorkerModule, namespace.overrides);
});

afterAll(async () => {
  await worker?.close();
  await configApi?.close();
  await namespace.tearDown();
});

it("drops the running worker's cached settings of that account, and of no other, on every accepted change", async () => {
  const destinations = worker.app.get(DestinationSettingsCache);
  const cache = { get: (accountId: number) => destinations.get(accountId, 'primary') };
  const account = await createAccount(configApi);
  const bystander = await createAccount(configApi);
  const bystanderCached = await cache.get(bystander.id);
  expect(bystanderCached).not.toBeNull();

  let cached = await cache.get(account.id);
  expect(cached).not.toBeNull();
  // Served from memory while nothing changes (the same object again, not a new read).
  expect(await cache.get(account.id)).toBe(cached);

  const put = await adminCall(configApi, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { ordering: 'subject' });
  expect(put.status).toBe(200);
  const previous = cached;
  cached = await waitFor('the worker to drop the settings cached before the admin change', async () => {
    const now = await cache.get(account.id);
    return now !== previous && now;
  });
  // Read afresh: the new options are what the worker now holds.
  expect(cached?.ordering).toBe('subject');

  expect((await signedOpenApiCall(configApi, account, 'set_delivery_options', { max_per_second: 12 })).status).toBe(200);
  const beforeOpenApi = cached;
  await waitFor('the worker to drop the settings cached before the Open API change', async () => (await cache.get(account.id)) !== beforeOpenApi);
  expect((await cache.get(account.id))?.maxPerSecond).toBe(12);

  // Refused changes announce nothing. An accepted change of the bystander comes after them on the same
  // connection, so once the worker has dropped the bystander's entry any notice for the account has arrived too.
  const settled = await cache.get(account.id);
  expect((await signedOpenApiCall(configApi, account, 'set_delivery_options', { max_per_second: 0 })).status).toBe(400);
  expect((await adminCall(configApi, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { ordering: 'x' })).status).toBe(422);
  expect((await adminCall(configApi, 'PUT', `/admin/v1/accounts/${bystander.id}/delivery-options`, { max_per_second: 3 })).status).toBe(200);
  await waitFor("the worker to drop the bystander's settings", async () => (await cache.get(bystander.id)) !== bystanderCached);
  expect(await cache.get(account.id)).toBe(settled);
});
