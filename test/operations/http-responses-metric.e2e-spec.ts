import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { INGEST_HEADERS } from '../support/fixtures';
import { waitFor } from '@app/testing';

/**
 * http_server_responses_total feeds the ingest 5xx alert: every answer is counted by status class,
 * on the routes served ahead of Express (POST /v1/events with JSON) as on Express's own; health and
 * metrics requests are not.
 */
describe.each([
  ['warn', 'counted without writing request lines (no pino-http)'],
  ['info', 'counted by the request log that writes the lines'],
])('LOG_LEVEL=%s: answers %s', (logLevel) => {
  let ingest: RunningApp;

  async function responses(): Promise<Record<string, number>> {
    const exposition = await (await fetch(`${ingest.url}/metrics`)).text();
    return Object.fromEntries([...exposition.matchAll(/^http_server_responses_total\{status_class="(\dxx)"\} (\S+)$/gm)].map(([, statusClass, value]) => [statusClass, Number(value)]));
  }

  beforeAll(async () => {
    ingest = await startApp(IngestModule, { LOG_LEVEL: logLevel });
  });

  afterAll(async () => {
    await ingest?.close();
  });

  it('counts answers by status class on both paths, and not health or metrics', async () => {
    const before = await responses();
    const unauthorized = await fetch(`${ingest.url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauthorized.status).toBe(401);
    const invalid = await fetch(`${ingest.url}/v1/events`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify({ action: 'Nope' }) });
    expect(invalid.status).toBe(422);
    const missing = await fetch(`${ingest.url}/no-such-route`);
    expect(missing.status).toBe(404);
    expect((await fetch(`${ingest.url}/health/live`)).status).toBe(200);

    // Counted when each response closes, which may follow the client's read by a turn of the loop.
    const after = await waitFor('the three answers to be counted', async () => {
      const now = await responses();
      return (now['4xx'] ?? 0) - (before['4xx'] ?? 0) >= 3 ? now : undefined;
    });
    expect((after['4xx'] ?? 0) - (before['4xx'] ?? 0)).toBe(3);
    expect((after['2xx'] ?? 0) - (before['2xx'] ?? 0)).toBe(0);
  });
});
