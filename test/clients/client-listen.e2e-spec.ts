import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningSecret } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { parseArguments } from '../../clients/typescript/src/cli/arguments';
import { EventCallbacks, verifyWebhook } from '../../clients/typescript/src';
import { findEvent } from '../../clients/typescript/src/cli/feed';
import { type RunningApp, startApp } from '../support/apps';
import { codeBlocks, requireBuiltClient, ROOT, run } from '../support/client-examples';
import { createAccount, ingestSampleEvent, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { freePort } from '@app/testing';
import { type TestReceiver, useReceivers } from '../support/receiver';
import { waitFor } from '@app/testing';

/**
 * `event-callbacks listen` and `replay` (CONTRACT §14) as a developer runs them: the built command line
 * as a real process, following a real account's pull feed on config-api (events accepted by the real
 * ingest) and forwarding to a real local HTTP receiver that is up, down or refusing.
 */
jest.setTimeout(90_000);

const CLI = join(ROOT, 'clients', 'typescript', 'dist', 'cli.js');

let configApi: RunningApp;
let ingest: RunningApp;
let folder: string;

beforeAll(async () => {
  requireBuiltClient();
  // Listen polls twice a second here; the account's 60 calls a minute are the rate limit's own tests' business.
  configApi = await startApp(ConfigApiModule, { OPEN_API_RATE_LIMIT: '100000' });
  ingest = await startApp(IngestModule);
  folder = mkdtempSync(join(tmpdir(), 'client-listen-'));
});

afterAll(async () => {
  await ingest?.close();
  await configApi?.close();
  rmSync(folder, { recursive: true, force: true });
});

async function feedAccount(): Promise<TestAccount> {
  const account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { permissions: 'all' });
  return account;
}

let counter = 0;
/** Events accepted by ingest for the account, in this order; answers their ids. */
async function ingestEvents(account: TestAccount, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    counter += 1;
    ids.push(await ingestSampleEvent(ingest, account.id, 'Customer_update', { id: counter }));
  }
  return ids;
}

/**
 * The feed shows an event once every write transaction that began before it has ended, anywhere in the
 * cluster (CONTRACT §10): under the suite's parallel files a migration elsewhere can hold it back for
 * seconds. "Before listen starts" means visible in the feed before it starts.
 */
const FEED_WAIT = { timeoutMs: 60_000, intervalMs: 200 };

async function visibleInFeed(account: TestAccount, ids: string[]): Promise<void> {
  const client = new EventCallbacks({ baseUrl: configApi.url, email: account.email, token: account.open_api_token });
  await waitFor(`${ids.join(', ')} in the feed`, async () => (await findEvent(client, ids[ids.length - 1], 500)) !== undefined, FEED_WAIT);
}

function credentials(account: TestAccount): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', EVENT_CALLBACKS_URL: configApi.url, EVENT_CALLBACKS_EMAIL: account.email, EVENT_CALLBACKS_TOKEN: account.open_api_token };
}

/** Every receiver the file starts is stopped after it. */
const receivers = useReceivers();

/** A local receiver (on `port` when given); `answer` picks the status of the n-th request (from 0). */
async function receiverOn(port?: number, answer: (index: number) => number = () => 200): Promise<TestReceiver> {
  let count = 0;
  return receivers((created) => created.respondWith((_request, response) => void response.writeHead(answer(count++)).end()), '/hook', port);
}

/** The webhook-id of each request the receiver got, in order. */
function idsAt(receiver: TestReceiver): string[] {
  return receiver.requests.map((request) => String(request.headers['webhook-id']));
}

/** The command line running in the background: its output so far, and a way to stop it as Ctrl+C does. */
class Listener {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString('utf8')));
    this.child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 80_000);
    void this.exited.then(() => clearTimeout(killer));
  }

  lines(): string[] {
    return this.stdout.split('\n').filter(Boolean);
  }

  async listening(): Promise<void> {
    await waitFor(`listen to start (stderr: ${this.stderr})`, () => this.stderr.includes('listening to the feed'), { timeoutMs: 30_000 });
  }

  async interrupt(): Promise<number | null> {
    this.child.kill('SIGINT');
    return this.exited;
  }
}

const listeners: Listener[] = [];
afterEach(() => {
  for (const listener of listeners.splice(0)) void listener.interrupt();
});

function listen(account: TestAccount, ...args: string[]): Listener {
  const listener = new Listener(['listen', '--interval', '0.5', ...args], credentials(account));
  listeners.push(listener);
  return listener;
}

const LINE = /^\d\d:\d\d:\d\d\.\d{3} {2}(\S+) {2}(\S+) {2}→ (.+?) {2}(\d+) ms(?: {2}\((.+)\))?$/;

describe('listen', () => {
  it('forwards the events that come after it starts, in feed order, signed, one line each; Ctrl+C ends it with 0', async () => {
    const account = await feedAccount();
    const receiver = await receiverOn();
    await visibleInFeed(account, await ingestEvents(account, 2)); // before it starts: not forwarded
    const secret = generateSigningSecret();
    const listener = listen(account, '--forward', receiver.url, '--secret', secret);
    await listener.listening();
    const ids = await ingestEvents(account, 3);

    await waitFor('three events forwarded', () => receiver.requests.length >= 3, FEED_WAIT);
    expect(idsAt(receiver)).toEqual(ids);
    for (const request of receiver.requests) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(Object.keys(JSON.parse(request.body) as object)).toEqual(['action', 'message']);
      expect(JSON.parse(request.body)).toMatchObject({ action: 'Customer_update', message: { id: expect.any(Number) } });
      expect(() => verifyWebhook(secret, request.headers, request.body)).not.toThrow();
    }
    await waitFor('three lines', () => listener.lines().length >= 3);
    expect(listener.lines().map((line) => LINE.exec(line)?.slice(1, 4))).toEqual(ids.map((id) => [id, 'Customer_update', '200']));

    expect(await listener.interrupt()).toBe(0);
    expect(listener.stderr.trim().split('\n').at(-1)).toBe('event-callbacks: stopped');
    expect(receiver.requests).toHaveLength(3);
  });

  it('keeps its place with --state: a later listen forwards exactly what came since', async () => {
    const account = await feedAccount();
    const receiver = await receiverOn();
    const state = join(folder, `state-${account.id}.json`);
    const first = listen(account, '--forward', receiver.url, '--state', state);
    await first.listening();
    const before = await ingestEvents(account, 2);
    await waitFor('two events forwarded', () => receiver.requests.length >= 2, FEED_WAIT);
    expect(await first.interrupt()).toBe(0);
    expect(first.stderr).toContain(`stopped; the place is kept in ${state}`);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toEqual({ after: expect.any(String), last_event_id: null });

    const whileStopped = await ingestEvents(account, 3);
    const second = listen(account, '--forward', receiver.url, '--state', state);
    await waitFor('the events of the stop forwarded', () => receiver.requests.length >= 5, FEED_WAIT);
    const after = await ingestEvents(account, 1);
    await waitFor('the next one too', () => receiver.requests.length >= 6, FEED_WAIT);
    expect(second.stderr).toContain(`resuming where ${state} left off`);
    expect(idsAt(receiver)).toEqual([...before, ...whileStopped, ...after]);
    expect(await second.interrupt()).toBe(0);
  });

  it('starts right after --since', async () => {
    const account = await feedAccount();
    const receiver = await receiverOn();
    const ids = await ingestEvents(account, 3);
    await visibleInFeed(account, ids);
    const listener = listen(account, '--forward', receiver.url, '--since', ids[0]);
    await waitFor('the two after --since', () => receiver.requests.length >= 2, FEED_WAIT);
    await listener.listening();
    expect(idsAt(receiver)).toEqual(ids.slice(1));
    expect(await listener.interrupt()).toBe(0);
  });

  it('sends an event again after 1 s and 2 s to a receiver that is down, then answers 503, keeping the order', async () => {
    const account = await feedAccount();
    const port = await freePort();
    const listener = listen(account, '--forward', `http://127.0.0.1:${port}/hook`);
    await listener.listening();
    const ids = await ingestEvents(account, 2);
    await waitFor('the first refused attempt', () => listener.lines().length >= 1, FEED_WAIT);
    // Up from now on, refusing its first call (the event's second attempt) with 503.
    const receiver = await receiverOn(port, (index) => (index === 0 ? 503 : 200));
    await waitFor('both events taken', () => receiver.requests.filter((request) => request.headers['webhook-id'] === ids[1]).length >= 1, FEED_WAIT);

    expect(idsAt(receiver)).toEqual([ids[0], ids[0], ids[1]]);
    await waitFor('the four lines', () => listener.lines().length >= 4);
    const lines = listener.lines().map((line) => LINE.exec(line)?.slice(1));
    expect(lines).toEqual([
      [ids[0], 'Customer_update', 'connection refused', expect.any(String), 'again in 1 s'],
      [ids[0], 'Customer_update', '503', expect.any(String), 'again in 2 s'],
      [ids[0], 'Customer_update', '200', expect.any(String), undefined],
      [ids[1], 'Customer_update', '200', expect.any(String), undefined],
    ]);
    expect(await listener.interrupt()).toBe(0);
  });
});

describe('replay', () => {
  it('sends one stored event of the account, and fails with 1 for an event not in the feed', async () => {
    const account = await feedAccount();
    const receiver = await receiverOn();
    const ids = await ingestEvents(account, 3);
    await visibleInFeed(account, ids);
    const sent = await run(process.execPath, [CLI, 'replay', ids[1], '--forward', receiver.url], { env: credentials(account) });
    expect(sent).toMatchObject({ code: 0, stderr: '' });
    expect(LINE.exec(sent.stdout.trim())?.slice(1, 4)).toEqual([ids[1], 'Customer_update', '200']);
    expect(idsAt(receiver)).toEqual([ids[1]]);

    const missing = await run(process.execPath, [CLI, 'replay', 'evt_not_there', '--forward', receiver.url], { env: credentials(account) });
    expect(missing).toMatchObject({ code: 1, stderr: "event-callbacks: event evt_not_there is not in the account's feed\n" });
  });
});

describe('flags, credentials and exit statuses', () => {
  it('lists the commands with --help (0) and refuses a wrong or missing flag with one line (2)', async () => {
    const help = await run(process.execPath, [CLI, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('event-callbacks listen --forward <local url>');
    expect(help.stdout).toContain('event-callbacks replay <event_id> --forward <local url>');

    const env = { PATH: process.env.PATH ?? '', EVENT_CALLBACKS_URL: configApi.url, EVENT_CALLBACKS_EMAIL: 'a@example.com', EVENT_CALLBACKS_TOKEN: 't' };
    const cases: [string[], NodeJS.ProcessEnv, string][] = [
      [['listen', '--forward', 'http://127.0.0.1:9/', '--colour'], env, 'unknown flag --colour for listen'],
      [['listen'], env, '--forward <local url> is missing'],
      [['listen', '--forward', 'ftp://127.0.0.1/'], env, '--forward must be an http(s) URL'],
      [['listen', '--forward', 'http://127.0.0.1:9/'], { PATH: env.PATH }, '--url (or EVENT_CALLBACKS_URL) is missing'],
      [['listen', '--forward', 'http://127.0.0.1:9/', '--secret', 'nope'], env, '--secret must be whsec_'],
      [['replay', '--forward', 'http://127.0.0.1:9/'], env, 'replay needs the event id'],
      [['serve'], env, 'unknown command "serve"'],
    ];
    for (const [args, environment, message] of cases) {
      const result = await run(process.execPath, [CLI, ...args], { env: environment });
      expect({ args, code: result.code, lines: result.stderr.trim().split('\n').length }).toEqual({ args, code: 2, lines: 1 });
      expect(result.stderr).toContain(message);
    }
  });

  it('ends with 3 when the service refuses the credentials, never printing the token', async () => {
    const account = await feedAccount();
    const env = { ...credentials(account), EVENT_CALLBACKS_TOKEN: 'wrong-token-4f1d' };
    const result = await run(process.execPath, [CLI, 'listen', '--forward', 'http://127.0.0.1:9/'], { env });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe('event-callbacks: the service refused the credentials (401, code 2059: unknown email or wrong sign)\n');
    expect(result.stdout + result.stderr).not.toContain('wrong-token-4f1d');
  });

  it('reads every command of docs/clients.md as valid', () => {
    const commands = codeBlocks('docs/clients.md', 'sh')
      .flatMap((block) => block.split('\n'))
      .filter((line) => line.startsWith('event-callbacks '))
      .map((line) => line.split(' ').slice(1));
    expect(commands.length).toBeGreaterThanOrEqual(4);
    const env = { EVENT_CALLBACKS_URL: 'https://callbacks.example.com', EVENT_CALLBACKS_EMAIL: 'admin@example.com', EVENT_CALLBACKS_TOKEN: 't' };
    for (const words of commands) expect(() => parseArguments(words, env)).not.toThrow();
  });
});
