import { storage } from 'nestjs-pino/storage';
import { IngestModule } from '../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from './support/apps';

/**
 * A request's logger is bound in an AsyncLocalStorage, whose first use turns on Node 20's promise hooks
 * for the rest of the process (every later promise pays). Health and metrics requests, made all day
 * by Prometheus and the orchestrator, must bind nothing, so a process serving only those (the worker)
 * never turns the hooks on; other requests still get their bound logger.
 */
let app: RunningApp;
let binds: jest.SpyInstance;

beforeAll(async () => {
  app = await startApp(IngestModule);
  binds = jest.spyOn(storage, 'run');
});

afterAll(async () => {
  binds?.mockRestore();
  await app?.close();
});

it('log binding: none for health and metrics requests', async () => {
  for (const path of ['/metrics', '/health/live', '/health/ready']) {
    const answer = await fetch(`${app.url}${path}`);
    await answer.arrayBuffer();
    expect(answer.status).toBeLessThan(600);
  }
  expect(binds).not.toHaveBeenCalled();
});

it('log binding: still one for any other request', async () => {
  const missing = await fetch(`${app.url}/no-such-route`);
  await missing.arrayBuffer();
  expect(missing.status).toBe(404);
  expect(binds).toHaveBeenCalled();
});
