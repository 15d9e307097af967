import { createServer } from 'node:net';

/** Ports drawn here: below Linux's ephemeral range (32768 and up) and the Redis deployments' 12000–32000. */
const FIRST_PORT = 8_000;
const PORTS = 4_000;
/** In the range and on the fetch standard's list of bad ports: Node's fetch refuses to call it ("bad port"). */
const FETCH_BAD_PORTS = new Set([10_080]);
const handedOut = new Set<number>();

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    // Every interface: a child binding `::` (or 127.0.0.1) must find it free too.
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/**
 * A port that was free a moment ago, for a child process that must be told its port. Not one the kernel
 * picks (port 0): those come from the ephemeral range, where a busy machine's outgoing connections take
 * ports between this check and the child's bind (seen: a bench's ingest failing with EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = FIRST_PORT + Math.floor(Math.random() * PORTS);
    if (handedOut.has(port) || FETCH_BAD_PORTS.has(port)) continue;
    if (await isFree(port)) {
      handedOut.add(port);
      return port;
    }
  }
}
