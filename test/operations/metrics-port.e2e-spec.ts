import { MetricsServer } from '@app/runtime';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';

/** METRICS_PORT: `/metrics` on a port of its own, and none on the public port. */
let ingest: RunningApp;

beforeAll(async () => {
  ingest = await startApp(IngestModule, { METRICS_PORT: '0' });
});

afterAll(async () => {
  await ingest?.close();
});

it('serves /metrics on METRICS_PORT only', async () => {
  const port = ingest.app.get(MetricsServer).port;
  expect(port).toEqual(expect.any(Number));
  expect(port).not.toBe(Number(new URL(ingest.url).port));

  const metrics = await fetch(`http://127.0.0.1:${port ?? 0}/metrics`);
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
  expect(await metrics.text()).toMatch(/^# HELP /m);
  expect((await fetch(`http://127.0.0.1:${port ?? 0}/health/ready`)).status).toBe(404);

  const publicPort = await fetch(`${ingest.url}/metrics`);
  expect(publicPort.status).toBe(404);
  expect(await publicPort.json()).toEqual({ error: 'not_found', message: 'metrics are served on METRICS_PORT' });
  expect((await fetch(`${ingest.url}/health/live`)).status).toBe(200);
});
