import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../webhooks';
import type { FeedItem } from './feed';
import { type Attempt, forwardEvent } from './forward';
import { attemptLine } from './output';

const item: FeedItem = { event_id: 'evt_1', action: 'Customer_create', message: { id: 1, name: 'Ada' }, created_at: '2026-01-01T00:00:00.000Z' };
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('forwarding one event', () => {
  let server: Server;
  let url: URL;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let statuses: number[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(statuses.shift() ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received.length = 0;
  });

  function forward(options: { secret?: string; to?: URL } = {}) {
    const reports: [Attempt, number | undefined][] = [];
    const waits: number[] = [];
    const sent = forwardEvent(item, {
      forward: options.to ?? url,
      secret: options.secret,
      report: (_item, attempt, retryInMs) => reports.push([attempt, retryInMs]),
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    return { sent, reports, waits };
  }

  it('posts {"action","message"} as JSON with the webhook headers, signed when given the secret', async () => {
    const { sent, reports } = forward({ secret });
    await expect(sent).resolves.toBe(true);
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request.body).toBe('{"action":"Customer_create","message":{"id":1,"name":"Ada"}}');
    expect(request.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-timestamp': expect.stringMatching(/^\d+$/) });
    expect(() => verifyWebhook(secret, request.headers, request.body)).not.toThrow();
    expect(reports).toEqual([[{ outcome: 200, ms: expect.any(Number), ok: true }, undefined]]);
  });

  it('leaves webhook-signature out without a secret', async () => {
    await forward().sent;
    expect(received[0].headers['webhook-signature']).toBeUndefined();
  });

  it('tries four times, 1 s, 2 s and 5 s apart, then gives up, each line saying so', async () => {
    statuses = [500, 502, 503, 500];
    const { sent, reports, waits } = forward();
    await expect(sent).resolves.toBe(false);
    expect(received).toHaveLength(4);
    expect(waits).toEqual([1000, 2000, 5000]);
    const lines = reports.map(([attempt, retryInMs]) => attemptLine(item, attempt, retryInMs, new Date(2026, 0, 1, 14, 3, 7, 412)));
    expect(lines[0]).toMatch(/^14:03:07\.412 {2}evt_1 {2}Customer_create {2}→ 500 {2}\d+ ms {2}\(again in 1 s\)$/);
    expect(lines[1]).toMatch(/→ 502 {2}\d+ ms {2}\(again in 2 s\)$/);
    expect(lines[2]).toMatch(/→ 503 {2}\d+ ms {2}\(again in 5 s\)$/);
    expect(lines[3]).toMatch(/→ 500 {2}\d+ ms {2}\(gave up after 4 attempts: event-callbacks replay evt_1 sends it again\)$/);
  });

  it('names a receiver that is down', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    statuses = [];
    const { sent, reports } = forward({ to: new URL(`http://127.0.0.1:${port}/`) });
    await expect(sent).resolves.toBe(false);
    expect(reports.map(([attempt]) => attempt.outcome)).toEqual(Array(4).fill('connection refused'));
  });
});
