import { freePort } from '@app/testing';
import type { Environment } from '../config/environment';
import { createRedisConnection, type RedisClient } from './redis-connection';

async function until(description: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('createRedisConnection', () => {
  const clients: RedisClient[] = [];
  afterEach(() => {
    for (const client of clients.splice(0)) client.disconnect();
    jest.restoreAllMocks();
  });

  /**
   * BullMQ gives each worker a duplicate of the connection for its blocking reads and removes its own
   * error listener when it closes it; a Cluster whose slot refresh fails after that (a close racing the
   * connect on a slow machine, or the cluster gone) emitted ClusterAllFailedError to nobody.
   */
  it('hears the errors of a Cluster connection and of its duplicates, whoever else listens', async () => {
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const environment = {
      redis: { url: 'redis://127.0.0.1:6379', prefix: 'test' },
      redisTopology: { kind: 'cluster', nodes: [{ host: '127.0.0.1', port: await freePort() }], auth: {} },
    } as unknown as Pick<Environment, 'redis' | 'redisTopology'>;
    const client = createRedisConnection(environment, 'blocking', 'spec');
    clients.push(client);
    const duplicate = client.duplicate();
    clients.push(duplicate);
    const refusedTwice = (connection: RedisClient) => {
      let failures = 0;
      connection.on('reconnecting', () => (failures += 1));
      return () => failures >= 2;
    };
    const [clientFailed, duplicateFailed] = [refusedTwice(client), refusedTwice(duplicate)];
    await until('both connections to fail their slot refresh twice', () => clientFailed() && duplicateFailed());
    expect(printed.mock.calls.map((call) => String(call[0]))).not.toContainEqual(expect.stringContaining('Unhandled error event'));
  });
});
