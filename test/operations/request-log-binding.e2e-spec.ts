import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BuiltAppProcess, jsonLogLines, spawnBuiltApp } from '../support/built-app';
import { INGEST_HEADERS } from '../support/fixtures';
import { freePort } from '@app/testing';
import { IsolatedNamespace } from '../support/isolated-namespace';

/**
 * No request binds anything in an AsyncLocalStorage: on Node 20 the first such binding turns on promise
 * hooks for the rest of the process, and every later promise of every delivery and ingest pays for
 * them (one-endpoint: 13 % more CPU per event). The built ingest runs with a spy on both ways to bind;
 * requests on every path must leave it silent, and are still logged with their ids.
 */
jest.setTimeout(120_000);

/** Loaded with `node --require`: prints a line whenever anything binds a value in an AsyncLocalStorage. */
const SPY_SOURCE = `
const { AsyncLocalStorage } = require('node:async_hooks');
for (const method of ['run', 'enterWith']) {
  const original = AsyncLocalStorage.prototype[method];
  AsyncLocalStorage.prototype[method] = function (...args) {
    process.stderr.write('async-local-storage-spy: ' + method + ' at ' + new Error().stack.split('\\n')[2].trim() + '\\n');
    return original.apply(this, args);
  };
}`;
const SPY = join(mkdtempSync(join(tmpdir(), 'als-spy-')), 'async-local-storage-spy.js');
const MARK = 'async-local-storage-spy:';
const namespace = new IsolatedNamespace('request-log-binding');
let ingest: BuiltAppProcess | undefined;
let url = '';

beforeAll(async () => {
  writeFileSync(SPY, SPY_SOURCE);
  await namespace.setUp();
  const port = await freePort();
  ingest = spawnBuiltApp('ingest', { ...namespace.overrides, LISTEN_HOST: '127.0.0.1', INGEST_PORT: String(port), NODE_OPTIONS: `--require ${SPY}` });
  await ingest.waitForOutput(`listening on http://127.0.0.1:${port}`);
  url = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await ingest?.terminate(10_000);
  await namespace.tearDown();
});

async function send(path: string, init?: RequestInit): Promise<number> {
  const answer = await fetch(`${url}${path}`, init);
  await answer.arrayBuffer();
  return answer.status;
}

it('log binding: the spy reports a binding when one happens', () => {
  const bound = spawnSync(process.execPath, ['--require', SPY, '-e', "new (require('node:async_hooks').AsyncLocalStorage)().run(1, () => 0)"], { encoding: 'utf8' });
  expect(bound.stderr).toContain(`${MARK} run`);
});

it('log binding: none for any request, on either path, and each request is logged with its id', async () => {
  expect(await send('/metrics')).toBe(200);
  expect(await send('/health/live')).toBe(200);
  expect(await send('/no-such-route')).toBe(404);
  // Served ahead of Express: refused unread, then refused after validation.
  expect(await send('/v1/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).toBe(401);
  expect(await send('/v1/events', { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify({ action: 'Nope' }) })).toBe(422);
  // Express's own routes.
  expect(await send('/v1/bot/message-trigger', { method: 'POST', headers: INGEST_HEADERS, body: '{}' })).toBeGreaterThanOrEqual(400);

  await ingest?.waitForOutput('"path":"/v1/bot/message-trigger"');
  const output = ingest?.output() ?? '';
  expect(output).not.toContain(MARK);
  const answered = jsonLogLines(output).filter((line) => line.res !== undefined && line.req !== undefined);
  expect(answered.map((line) => line.req?.path)).toEqual(['/no-such-route', '/v1/events', '/v1/events', '/v1/bot/message-trigger']);
  expect(new Set(answered.map((line) => line.req?.id)).size).toBe(4);
});
