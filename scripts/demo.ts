import type { AddressInfo } from 'node:net';
import { EVENT_ACTIONS, PERMISSION_KEYS, SAMPLE_MESSAGES } from '@app/payloads';
import { openApiQuery } from '@app/signing';
import { createReceiverServer, type ReceivedCallback } from '../examples/receiver/receiver.server';

/**
 * `npm run demo` (with `npm start` running): an API user's whole journey. Creates an account, starts
 * the example receiver, configures callbacks through the signed Open API, posts one event of each
 * action to ingest and prints what the receiver got, signature verified.
 */

const CONFIG_API = process.env.CONFIG_API_URL ?? `http://127.0.0.1:${process.env.CONFIG_API_PORT ?? 3000}`;
const INGEST = process.env.INGEST_URL ?? `http://127.0.0.1:${process.env.INGEST_PORT ?? 3001}`;
const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? 'dev-admin-token-change-me';
const INGEST_TOKEN = (process.env.INGEST_TOKEN ?? 'dev-ingest-token-change-me').split(',')[0];

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function call(url: string, init: RequestInit & { expect: number[] }): Promise<Record<string, unknown>> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (!init.expect.includes(response.status)) throw new Error(`${init.method ?? 'GET'} ${url.split('?')[0]} answered ${response.status}: ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

async function main(): Promise<void> {
  const account = await call(`${CONFIG_API}/admin/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `demo-${Date.now()}@example.com`, name: 'Demo user' }),
    expect: [201],
  });
  const credentials = { email: String(account.email), openApiToken: String(account.open_api_token) };
  say(`1. created account ${String(account.id)} (${credentials.email})`);

  const received: ReceivedCallback[] = [];
  const receiver = createReceiverServer({ signingSecret: String(account.signing_secret), onCallback: (callback) => received.push(callback) });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callbacks`;
  say(`2. example receiver listening on ${receiverUrl}`);

  const openApi = (operation: string, body: unknown) =>
    call(`${CONFIG_API}/open_api_v1/${operation}?${new URLSearchParams(openApiQuery(credentials)).toString()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      expect: [200],
    });
  say(`3. set_url -> ${JSON.stringify(await openApi('set_url', { push_url: receiverUrl }))}`);
  const everything = Object.fromEntries(PERMISSION_KEYS.map((key) => [key, true]));
  say(`   set_permissions -> ${JSON.stringify(await openApi('set_permissions', { permissions: everything }))}`);
  say(`   set_push_content_type -> ${JSON.stringify(await openApi('set_push_content_type', { push_content_type: 'JSON' }))}`);

  for (const action of EVENT_ACTIONS) {
    const answer = await call(`${INGEST}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: account.id, action, message: SAMPLE_MESSAGES[action] }),
      expect: [202],
    });
    say(`4. posted ${action.padEnd(20)} -> ${JSON.stringify(answer)}`);
  }

  const deadline = Date.now() + 30_000;
  while (received.length < EVENT_ACTIONS.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  say(`5. the receiver verified and got ${received.length} of ${EVENT_ACTIONS.length} callbacks:`);
  for (const callback of received) say(`   ${callback.webhookId}  ${callback.action.padEnd(20)} ${JSON.stringify(callback.message).slice(0, 100)}`);
  receiver.closeAllConnections();
  receiver.close();
  if (received.length < EVENT_ACTIONS.length) {
    say('   not everything arrived within 30 s: see GET /admin/v1/events for each event\'s attempts');
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  say(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  say('is the system running? Start it with: npm start');
  process.exit(1);
});
