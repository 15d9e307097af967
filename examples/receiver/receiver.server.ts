import { createServer, type Server } from 'node:http';
import { parse as parseForm } from 'qs';
import { verifyWebhook } from '@app/signing';

/**
 * What an API user's callback endpoint looks like: verify the Standard Webhooks signature over the raw
 * bytes, answer 2xx quickly, dedupe on `webhook-id` (delivery is at least once), then process.
 */
export interface ReceivedCallback {
  webhookId: string;
  action: string;
  message: unknown;
  contentType: string;
}

export interface ReceiverOptions {
  signingSecret: string;
  onCallback?: (callback: ReceivedCallback) => void;
}

const MAX_BODY_BYTES = 1024 * 1024;

export function createReceiverServer(options: ReceiverOptions): Server {
  const seen = new Set<string>();
  return createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyWebhook(request.headers, body, options.signingSecret);
      if (!verdict.ok) {
        response.writeHead(401, { 'content-type': 'text/plain' }).end(verdict.reason);
        return;
      }
      const webhookId = String(request.headers['webhook-id']);
      response.writeHead(204).end();
      if (seen.has(webhookId)) return;
      seen.add(webhookId);
      const contentType = String(request.headers['content-type'] ?? '');
      const parsed = (contentType.startsWith('application/json') ? JSON.parse(body) : parseForm(body, { depth: 20, arrayLimit: 1000 })) as {
        action: string;
        message: unknown;
      };
      options.onCallback?.({ webhookId, action: parsed.action, message: parsed.message, contentType });
    });
  });
}

if (require.main === module) {
  const signingSecret = process.env.SIGNING_SECRET;
  if (!signingSecret) {
    process.stderr.write('Set SIGNING_SECRET to the account signing secret (whsec_...)\n');
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 4000);
  createReceiverServer({
    signingSecret,
    onCallback: (callback) => process.stdout.write(`${callback.webhookId} ${callback.action} ${JSON.stringify(callback.message)}\n`),
  }).listen(port, '127.0.0.1', () => process.stdout.write(`receiver listening on http://127.0.0.1:${port}/\n`));
}
