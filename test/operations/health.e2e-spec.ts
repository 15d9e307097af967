import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';

describe.each([
  ['config-api', ConfigApiModule],
  ['ingest', IngestModule],
  ['delivery-worker', DeliveryWorkerModule],
])('%s health and metrics', (_name, rootModule) => {
  let running: RunningApp;
  beforeAll(async () => {
    running = await startApp(rootModule);
  });
  afterAll(async () => {
    await running.close();
  });

  it('is live and ready against real PostgreSQL and Redis', async () => {
    const live = await fetch(`${running.url}/health/live`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${running.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok', secrets: 'ok' } });
  });

  it('serves Prometheus text', async () => {
    const response = await fetch(`${running.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(await response.text()).toContain('# HELP');
  });
});
