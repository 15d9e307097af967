import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnvironment } from '../support/child-environment';
import { requireBuiltFile } from '../support/built-app';
import { freePort } from '@app/testing';
import { waitFor } from '@app/testing';
import { APP_NODE_FLAGS } from '@app/runtime';

/**
 * `npm start` (the built scripts/start-all.js) listens on loopback only unless LISTEN_HOST says otherwise
 * (CONTRACT §1), and runs the apps with the flags the image gives them.
 */
jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
const RUNNER = join(ROOT, 'dist', 'scripts', 'start-all.js');

let runner: ChildProcess | undefined;
let output = '';

afterAll(async () => {
  if (!runner || runner.exitCode !== null || runner.signalCode !== null) return;
  const exited = new Promise((resolve) => runner?.once('exit', resolve));
  runner.kill('SIGTERM');
  const killer = setTimeout(() => runner?.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(killer);
});

it('listens on 127.0.0.1 only when LISTEN_HOST is not set', async () => {
  requireBuiltFile(RUNNER);
  const ports = { CONFIG_API_PORT: await freePort(), INGEST_PORT: await freePort(), WORKER_PORT: await freePort() };
  const env = childEnvironment(Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])));
  delete env.LISTEN_HOST;
  runner = spawn(process.execPath, [RUNNER], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [runner.stdout, runner.stderr]) stream?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await waitFor('npm start to say the apps are ready', () => {
    if (runner?.exitCode !== null) throw new Error(`start-all exited:\n${output.slice(-3000)}`);
    return output.includes('all three apps are ready');
  }, { timeoutMs: 90_000, intervalMs: 200 });

  expect(output).toContain('LISTEN_HOST not set; listening on 127.0.0.1 only');
  for (const port of Object.values(ports)) {
    expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
    // Another address of this machine: refused when the apps bind loopback's 127.0.0.1 alone.
    await expect(fetch(`http://127.0.0.2:${port}/health/live`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  }
});

it('starts each app with the Node.js flags the image sets (APP_NODE_FLAGS)', () => {
  expect(runner?.pid).toBeDefined();
  const children = readFileSync(`/proc/${runner?.pid}/task/${runner?.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  const commandLines = children.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean));
  const apps = commandLines.filter((argv) => argv.some((arg) => /dist\/apps\/[^/]+\/src\/main\.js$/.test(arg)));
  expect(apps).toHaveLength(3);
  for (const argv of apps) expect(argv.slice(1, 1 + APP_NODE_FLAGS.length)).toEqual([...APP_NODE_FLAGS]);
});
