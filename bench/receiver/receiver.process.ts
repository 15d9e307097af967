import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveIpc } from '../support/ipc';
import type { ArrivalStats, ReceiverMode } from './receiver-control';

/**
 * The callback receiver: one HTTP server per loopback address (distinct origins, so the service's
 * per-endpoint limits apply as in production), all on one port. It answers 200 at once, or never
 * ("hang"), or 503 ("down"), per address; it records the first arrival time of every webhook-id,
 * grouped by the id's tag (the part before the first "-"), and reports over IPC. "slow" answers 200
 * after SLOW_ANSWER_MS and "crawl" after CRAWL_ANSWER_MS (receivers of bounded capacity, for the
 * noisy-neighbour scenario).
 */
const SLOW_ANSWER_MS = 40;
const CRAWL_ANSWER_MS = 400;
const hosts = (process.env.RECEIVER_HOSTS ?? '127.0.0.2').split(',');
const modes = new Map<string, ReceiverMode>(hosts.map((host) => [host, 'ok']));
const held = new Map<string, Set<ServerResponse>>(hosts.map((host) => [host, new Set()]));

interface TagRecord {
  arrivals: Map<string, number>;
  duplicates: number;
  refused: number;
  byHost: Map<string, number>;
  /** The last call answered 200, a repeat of an id or not: one event sent to several destinations arrives once per host. */
  lastCall: number;
}
const tags = new Map<string, TagRecord>();

function recordOf(tag: string): TagRecord {
  let record = tags.get(tag);
  if (!record) {
    record = { arrivals: new Map(), duplicates: 0, refused: 0, byHost: new Map(), lastCall: 0 };
    tags.set(tag, record);
  }
  return record;
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable with the load generator's. */
const now = (): number => performance.timeOrigin + performance.now();

function handle(host: string, request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  request.once('end', () => {
    const at = now();
    const id = String(request.headers['webhook-id'] ?? '');
    const record = recordOf(id.split('-', 1)[0] ?? '');
    const mode = modes.get(host) ?? 'ok';
    if (mode === 'down') {
      record.refused += 1;
      response.writeHead(503, { 'retry-after': '1' }).end();
      return;
    }
    if (mode === 'hang') {
      held.get(host)?.add(response);
      response.once('close', () => held.get(host)?.delete(response));
      return;
    }
    if (record.arrivals.has(id)) record.duplicates += 1;
    else record.arrivals.set(id, at);
    record.byHost.set(host, (record.byHost.get(host) ?? 0) + 1);
    record.lastCall = at;
    const answerAfterMs = mode === 'slow' ? SLOW_ANSWER_MS : mode === 'crawl' ? CRAWL_ANSWER_MS : 0;
    if (answerAfterMs > 0) setTimeout(() => response.writeHead(200, { 'content-length': '0' }).end(), answerAfterMs);
    else response.writeHead(200, { 'content-length': '0' }).end();
  });
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

async function listenAll(): Promise<number> {
  for (let tries = 0; tries < 10; tries += 1) {
    const servers: Server[] = [];
    try {
      let port = 0;
      for (const host of hosts) {
        const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => handle(host, request, response));
        servers.push(server);
        port = await listen(server, host, port);
      }
      return port;
    } catch {
      // The first address's random port was taken on another address: try another port.
      for (const server of servers) server.close();
    }
  }
  throw new Error(`could not listen on one port on all of ${hosts.join(', ')}`);
}

function stats(tag: string): ArrivalStats {
  const record = recordOf(tag);
  let first = Infinity;
  let last = 0;
  for (const at of record.arrivals.values()) {
    if (at < first) first = at;
    if (at > last) last = at;
  }
  return {
    unique: record.arrivals.size,
    duplicates: record.duplicates,
    refused: record.refused,
    first: record.arrivals.size ? first : null,
    last: record.arrivals.size ? last : null,
    lastCall: record.lastCall || null,
    byHost: Object.fromEntries(record.byHost),
  };
}

async function main(): Promise<void> {
  const port = await listenAll();
  serveIpc((type, payload) => {
    const input = (payload ?? {}) as { tag?: string; hosts?: string[]; mode?: ReceiverMode };
    switch (type) {
      case 'port':
        return Promise.resolve(port);
      case 'stats':
        return Promise.resolve(stats(input.tag ?? ''));
      case 'arrivals': {
        const arrivals = recordOf(input.tag ?? '').arrivals;
        return Promise.resolve({ ids: [...arrivals.keys()], at: [...arrivals.values()] });
      }
      case 'forget':
        tags.delete(input.tag ?? '');
        return Promise.resolve(true);
      case 'mode':
        for (const host of input.hosts ?? []) {
          modes.set(host, input.mode ?? 'ok');
          if (input.mode !== 'hang') {
            // Held calls are released with 503, so the service sees a failed attempt, not a success it never measured.
            for (const response of held.get(host) ?? []) response.writeHead(503).end();
            held.get(host)?.clear();
          }
        }
        return Promise.resolve(true);
      default:
        return Promise.reject(new Error(`unknown request ${type}`));
    }
  });
  process.send?.({ ready: true });
}

void main().catch((error: unknown) => {
  process.stderr.write(`receiver: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
