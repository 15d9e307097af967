import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export type Responder = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

/** A real HTTP server on loopback that records every request; its answer can be changed mid-test. */
export class TestReceiver {
  readonly requests: ReceivedRequest[] = [];
  private responder: Responder = (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  };
  private server?: Server;
  url = '';

  respondWith(responder: Responder): this {
    this.responder = responder;
    return this;
  }

  /** Answers with this status (and optional headers/body) from now on. */
  respondStatus(status: number, headers: Record<string, string> = {}, body = ''): this {
    return this.respondWith((_request, response) => {
      response.writeHead(status, headers).end(body);
    });
  }

  /** Listens on loopback: on `port` when given (a receiver that comes up later at a known address), else any free one. */
  async start(path = '/hook', port = 0): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: ReceivedRequest = {
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        this.requests.push(received);
        Promise.resolve(this.responder(received, response)).catch(() => response.destroy());
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    const address = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${address.port}${path}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * Receivers for the calling file or describe block: each call starts one on loopback (set up by `setUp`
 * before it listens, e.g. to answer 503), and every one started is stopped after the block's tests.
 */
export function useReceivers(): (setUp?: (receiver: TestReceiver) => TestReceiver, path?: string, port?: number) => Promise<TestReceiver> {
  const started: TestReceiver[] = [];
  afterAll(async () => {
    await Promise.all(started.splice(0).map((receiver) => receiver.stop()));
  });
  return async (setUp = (receiver) => receiver, path, port) => {
    const receiver = await setUp(new TestReceiver()).start(path, port);
    started.push(receiver);
    return receiver;
  };
}
