import { connect } from 'node:net';
import { useConfigApiAndIngest } from '../support/config-api-and-ingest';
import { INGEST_HEADERS } from '../support/fixtures';

/**
 * A request target in absolute form (`POST http://host/v1/events HTTP/1.1`, RFC 9112 §3.2.2), which fetch
 * never sends but any client may: Express routes it like `/v1/events`, so the token must be checked before
 * its body is read exactly as for the origin form (CONTRACT §4). Sent over a raw socket.
 */
const suite = useConfigApiAndIngest();

/** Writes `head` and `body` as they are, and resolves with the status line's code once it arrives (the body may never be finished). */
function rawStatus(head: string, body: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(suite.ingest.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const end = received.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(received);
      if (end >= 0 && length && received.length >= end + 4 + Number(length[1])) {
        socket.destroy();
        resolve({ status: Number(received.split(' ')[1]), text: received.slice(end + 4) });
      }
    });
    socket.on('error', reject);
    // A server waiting for the rest of the body never answers: that is the failure, not a hang.
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error(`no answer within 10 s to ${head.split('\r\n')[0]}`));
    });
    socket.write(`${head}\r\n\r\n${body}`);
  });
}

function headOf(target: string, headers: Record<string, string>, contentLength: number): string {
  const { host } = new URL(suite.ingest.url);
  const lines = [`POST ${target} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), `Content-Length: ${contentLength}`];
  return lines.join('\r\n');
}

describe('a request in absolute form', () => {
  const absolute = (path: string): string => `${suite.ingest.url}${path}`;

  it.each(['/v1/events', '/v1/events/batch', '/V1/Events?via=nest', '/v1/bot/task-push'])('gets 401 for %s without a token before its body is parsed', async (path) => {
    const answer = await rawStatus(headOf(absolute(path), { 'Content-Type': 'application/json' }, 4), '{bad');
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toMatchObject({ error: 'unauthorized' });
  });

  it('gets 401 for a body announced as 50 MiB without reading it, as the origin form does', async () => {
    for (const target of ['/v1/events', absolute('/v1/events')]) {
      // Only the first bytes are ever sent: the answer must come without the rest.
      const answer = await rawStatus(headOf(target, { 'Content-Type': 'application/json' }, 50 * 1024 * 1024), '{"account_id":');
      expect({ target, status: answer.status }).toEqual({ target, status: 401 });
    }
  });

  it('is served like the origin form with a token', async () => {
    const body = JSON.stringify({ account_id: suite.account.id, action: 'Customer_create', message: { id: 1 }, event_id: `absolute-form-${process.pid}-${Date.now()}` });
    const answer = await rawStatus(headOf(absolute('/v1/events'), INGEST_HEADERS, Buffer.byteLength(body)), body);
    expect(answer.status).toBe(202);
  });
});
