import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BuiltAppName, type BuiltAppProcess, spawnBuiltApp } from '../support/built-app';
import { freePort } from '@app/testing';
import { IsolatedNamespace } from '../support/isolated-namespace';

/**
 * An app with nothing to do sleeps: every wake-up of its main thread costs CPU, and at a few hundred
 * events a second the wake-ups of timers fall between the events and are paid in full. The built ingest
 * and worker, idle, are counted by the kernel (voluntary context switches of the main thread: each is
 * one sleep that something ended). A 10 ms timer (prom-client's default event loop sampling) alone
 * makes about 100 a second; the apps' own work idle (the worker's held-delivery feeder each second,
 * queue waits, lock renewals) about 10 to 20.
 */
jest.setTimeout(180_000);

const MEASURED_MS = 5_000;
const MOST_WAKE_UPS_A_SECOND = 50;

const namespace = new IsolatedNamespace('idle-wake-ups');
const running: BuiltAppProcess[] = [];

beforeAll(async () => {
  await namespace.setUp();
});

afterAll(async () => {
  await Promise.all(running.map((app) => app.terminate(10_000)));
  await namespace.tearDown();
});

function mainThreadSleeps(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const match = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status);
  if (!match) throw new Error(`no voluntary_ctxt_switches in /proc/${pid}/task/${pid}/status`);
  return Number(match[1]);
}

async function startIdle(app: BuiltAppName, ready: (port: number) => string, portSetting: string): Promise<{ pid: number; port: number }> {
  const port = await freePort();
  const started = spawnBuiltApp(app, { ...namespace.overrides, LISTEN_HOST: '127.0.0.1', [portSetting]: String(port) });
  running.push(started);
  await started.waitForOutput(ready(port));
  const pid = started.child.pid;
  if (pid === undefined) throw new Error(`${app} has no pid`);
  // Start-up's own work (connections, first plans, the first looks of the worker's loops) is over.
  await sleep(3_000);
  return { pid, port };
}

async function wakeUpsASecond(pid: number): Promise<number> {
  const before = mainThreadSleeps(pid);
  await sleep(MEASURED_MS);
  return ((mainThreadSleeps(pid) - before) * 1_000) / MEASURED_MS;
}

it('idle ingest wakes its main thread a few times a second, not a hundred', async () => {
  const { pid } = await startIdle('ingest', (port) => `listening on http://127.0.0.1:${port}`, 'INGEST_PORT');
  expect(await wakeUpsASecond(pid)).toBeLessThan(MOST_WAKE_UPS_A_SECOND);
});

it('idle worker wakes its main thread a few times a second, not a hundred', async () => {
  const { pid } = await startIdle('delivery-worker', () => 'consuming deliveries from', 'WORKER_PORT');
  expect(await wakeUpsASecond(pid)).toBeLessThan(MOST_WAKE_UPS_A_SECOND);
});

/** A gauge's value in a Prometheus text exposition. */
function gaugeValue(exposition: string, name: string): number {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(exposition);
  if (!match) throw new Error(`no ${name} in /metrics`);
  return Number(match[1]);
}

it('reports the event loop delay of an idle app, not the 100 ms between its samples', async () => {
  const { port } = await startIdle('ingest', (listening) => `listening on http://127.0.0.1:${listening}`, 'INGEST_PORT');
  // A scrape resets the histogram: the second one reads only the 2 s of idle after it (20 samples).
  await fetch(`http://127.0.0.1:${port}/metrics`);
  await sleep(2_000);
  const exposition = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  // Idle, the loop adds a few milliseconds at most to a sample (min and median: one stall of a busy
  // machine does not move them); Node's histogram also counts the 100 ms period, which is taken off.
  for (const name of ['nodejs_eventloop_lag_min_seconds', 'nodejs_eventloop_lag_p50_seconds']) {
    expect([name, gaugeValue(exposition, name) < 0.05]).toEqual([name, true]);
  }
});
