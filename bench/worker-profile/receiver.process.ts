import { createServer } from 'node:http';

/**
 * The fastest honest receiver: answers 200 with an empty body on every loopback address given
 * (WP_HOSTS, comma separated) at WP_PORT (WP_STATUS instead of 200 when set), and prints nothing; the worker's recorded attempts are what
 * the profile counts.
 */
const hosts = (process.env.WP_HOSTS ?? '127.0.0.2').split(',');
const port = Number(process.env.WP_PORT ?? 0);
const status = Number(process.env.WP_STATUS ?? 200);
let listening = 0;
for (const host of hosts) {
  const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    request.resume();
    request.once('end', () => response.writeHead(status, { 'content-length': '0' }).end());
  });
  server.listen(port, host, () => {
    listening += 1;
    if (listening === hosts.length) process.stdout.write('ready\n');
  });
}
