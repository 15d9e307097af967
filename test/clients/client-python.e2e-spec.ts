import { join } from 'node:path';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { useApps } from '../support/apps';
import { ROOT, run } from '../support/client-examples';
import { createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { type TestReceiver, useReceivers } from '../support/receiver';

/**
 * The Python client (CONTRACT §14): its pytest suite (signing and webhook vectors, model decoding, every
 * operation, the README's and docs' examples, mypy --strict and ruff) against the real config-api and
 * ingest this file starts, in clients/python/.venv as clients/python/venv.sh installs it.
 */
jest.setTimeout(300_000);

const PYTHON = join(ROOT, 'clients', 'python');

beforeAll(async () => {
  const installed = await run('bash', [join(PYTHON, 'venv.sh')], { timeoutMs: 240_000 });
  if (installed.code !== 0) throw new Error(`clients/python/venv.sh failed (${installed.code}):\n${installed.stdout}${installed.stderr}`);
});
const { configApi, ingest } = useApps({ configApi: ConfigApiModule, ingest: IngestModule });
let account: TestAccount;
let receiver: TestReceiver;
const receivers = useReceivers();

beforeAll(async () => {
  account = await createAccount(configApi);
  await setCallbackSettings(configApi.app, account.id, { permissions: {} });
  receiver = await receivers();
});

it('passes its pytest suite against the running service, skipping nothing', async () => {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    EVENT_CALLBACKS_URL: configApi.url,
    EVENT_CALLBACKS_EMAIL: account.email,
    EVENT_CALLBACKS_TOKEN: account.open_api_token,
    EVENT_CALLBACKS_SECRET: account.signing_secret,
    TEST_INGEST_URL: ingest.url,
    TEST_INGEST_TOKEN: (process.env.INGEST_TOKEN ?? '').split(',')[0],
    TEST_ACCOUNT_ID: String(account.id),
    TEST_RECEIVER_URL: receiver.url,
    TEST_SAMPLE_MESSAGE: JSON.stringify(SAMPLE_MESSAGES.Customer_update),
  };
  const result = await run(join(PYTHON, '.venv', 'bin', 'python'), ['-m', 'pytest', '-p', 'no:cacheprovider', '-rfEs', '--color=no'], { cwd: PYTHON, env, timeoutMs: 240_000 });
  const summary = result.stdout.trim().split('\n').at(-1) ?? '';
  expect({ code: result.code, summary, output: result.code === 0 ? '' : result.stdout + result.stderr }).toEqual({
    code: 0,
    summary: expect.stringMatching(/^=+ \d+ passed in [\d.]+s =+$/),
    output: '',
  });
  const passed = Number(/(\d+) passed/.exec(summary)?.[1]);
  expect(passed).toBeGreaterThanOrEqual(30);
});
