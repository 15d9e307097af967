import { type BuiltAppProcess, spawnBuiltApp } from '../support/built-app';
import { freePort } from '@app/testing';

/** The built config API as a process, bound by LISTEN_HOST to one loopback address only. */
jest.setTimeout(60_000);

let running: BuiltAppProcess | undefined;

afterAll(async () => {
  await running?.terminate(5_000);
});

it('answers on the LISTEN_HOST address and not on another interface', async () => {
  const port = await freePort();
  running = spawnBuiltApp('config-api', { CONFIG_API_PORT: String(port), LISTEN_HOST: '127.0.0.2' });
  await running.waitForOutput(`listening on http://127.0.0.2:${port}`);
  expect((await fetch(`http://127.0.0.2:${port}/health/live`)).status).toBe(200);
  await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
});
