import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { verifyMessageTriggerRequest, verifyTaskPushRequest } from '@app/signing';

/**
 * What an API user's bot webhook looks like (seed: "Bot webhook, message trigger type" and "task push
 * type"). One server answers both: `POST /message-trigger` (signed in the query) and `POST /task-push`
 * (signed in the body). A request whose signature does not check out is refused with 401 before its
 * content is used.
 */
export interface BotWebhookServerOptions {
  /** The key configured for the webhook on the service (`key` of POST /admin/v1/accounts/:id/bot-webhooks). */
  key: string;
  /** The webhook's name on the service: the seed's integrationName, part of the message-trigger signature. */
  integrationName: string;
  /** Seconds a signed timestamp stays acceptable (default 300). */
  toleranceSeconds?: number;
  /** Called with every verified call, e.g. to log it. */
  onCall?: (call: { type: 'message_trigger' | 'task_push'; body: Record<string, unknown> }) => void;
}

const MAX_BODY_BYTES = 1024 * 1024;

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(request: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

async function handle(options: BotWebhookServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const route = url.pathname === '/message-trigger' ? 'message_trigger' : url.pathname === '/task-push' ? 'task_push' : null;
  if (route === null) return sendJson(response, 404, { error: 'not_found', message: 'use POST /message-trigger or POST /task-push' });
  if (request.method !== 'POST') return sendJson(response, 405, { error: 'method_not_allowed', message: 'use POST' });

  const text = await readBody(request);
  if (text === null) return sendJson(response, 413, { error: 'payload_too_large', message: `at most ${MAX_BODY_BYTES} bytes` });
  const body = parseObject(text);
  if (body === null) return sendJson(response, 400, { error: 'bad_request', message: 'the body must be a JSON object' });
  const query = Object.fromEntries(url.searchParams);
  const verifyOptions = { key: options.key, toleranceSeconds: options.toleranceSeconds };

  if (route === 'message_trigger') {
    const verdict = verifyMessageTriggerRequest({ query, body }, { ...verifyOptions, integrationName: options.integrationName });
    if (!verdict.ok) return sendJson(response, 401, { error: 'unauthorized', message: verdict.reason });
    options.onCall?.({ type: route, body });
    // The answer replaces the answer content of the bot's reply.
    return sendJson(response, 200, { answerContent: `You asked: ${String(body.questionContent)}` });
  }

  const verdict = verifyTaskPushRequest({ query, body }, verifyOptions);
  // Task push failures are reported the seed's way too, so the bot can show something sensible.
  if (!verdict.ok) return sendJson(response, 401, { resCode: -1, resError: verdict.reason });
  options.onCall?.({ type: route, body });
  return sendJson(response, 200, {
    resCode: 0,
    resError: '',
    message: { msgType: 'plain', msgContent: `Reached task node ${String(body.taskNodeId)} in session ${String(body.sessionId)}.` },
    variables: { lastTaskNodeId: String(body.taskNodeId) },
  });
}

export function createBotWebhookServer(options: BotWebhookServerOptions): Server {
  return createServer((request, response) => {
    handle(options, request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 500, { error: 'internal_error', message: 'the webhook failed' });
      else response.destroy();
    });
  });
}

if (require.main === module) {
  const key = process.env.BOT_WEBHOOK_KEY;
  const integrationName = process.env.INTEGRATION_NAME;
  if (!key || !integrationName) {
    process.stderr.write('Set BOT_WEBHOOK_KEY (the key configured for the webhook) and INTEGRATION_NAME (its name)\n');
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 4100);
  const host = process.env.HOST ?? '127.0.0.1';
  createBotWebhookServer({
    key,
    integrationName,
    // The per-call sign is left out of the log line; the key never leaves this process.
    onCall: (call) => process.stdout.write(`${call.type} ${JSON.stringify({ ...call.body, sign: undefined })}\n`),
  }).listen(port, host, () => {
    process.stdout.write(`bot webhook listening: message trigger http://${host}:${port}/message-trigger, task push http://${host}:${port}/task-push\n`);
  });
}
