import type { AddressInfo } from 'node:net';
import { createBotWebhookServer } from '../../examples/bot-webhook/bot-webhook.server';
import { serveIpc } from '../support/ipc';

/** The example bot webhook (both signatures verified, answers at once) as a process of its own on loopback. */
const server = createBotWebhookServer({ key: process.env.BOT_WEBHOOK_KEY ?? '', integrationName: process.env.INTEGRATION_NAME ?? '' });
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as AddressInfo).port;
  serveIpc((type) => (type === 'port' ? Promise.resolve(port) : Promise.reject(new Error(`unknown request ${type}`))));
  process.send?.({ ready: true });
});
