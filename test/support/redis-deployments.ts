import Redis from 'ioredis';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
// Relative, not @app/testing: Jest loads global set-ups (cluster-global-setup imports this file) without its module name mapper.
import { waitFor } from '../../libs/testing/src';

/**
 * Real Redis deployments on loopback for the tests: a Redis Cluster of three masters and a Sentinel
 * deployment (primary, replica, three sentinels). The servers run in the foreground as children of
 * the test process, in a temporary directory of their own; `stop()` kills them and removes it, and an
 * `exit` hook kills whatever a failed run left, so no server outlives the tests.
 */

export interface HostPort {
  host: string;
  port: number;
}

const HOST = '127.0.0.1';
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

const taken = new Set<number>();

/**
 * Free loopback ports; a cluster node also needs port + 10000 for its bus. Both stay below Linux's
 * ephemeral range (32768 and up by default), where any outgoing connection of a busy machine may take
 * a port between the check below and redis-server's bind (seen: "bind: Address already in use" on a bus port).
 */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 12_000 + Math.floor(Math.random() * 10_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await portIsFree(port)) && (await portIsFree(port + 10_000))) {
      taken.add(port);
      ports.push(port);
    }
  }
  return ports;
}

/** Password of the servers started from here, when they require one (see startRedisCluster). */
const passwords = new Map<number, string>();

/** One command on a one-off connection that gives up at once (for polling). */
async function ask(port: number, ...command: string[]): Promise<unknown> {
  const password = passwords.get(port);
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
    ...(password === undefined ? {} : { password }),
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(command[0], ...command.slice(1));
  } finally {
    client.disconnect();
  }
}

class ServerProcess {
  readonly exited: Promise<void>;
  private output = '';

  constructor(
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    children.add(child);
    const collect = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        children.delete(child);
        resolve();
      }),
    );
  }

  static async start(port: number, args: string[]): Promise<ServerProcess> {
    const server = new ServerProcess(port, spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    try {
      await waitFor(`redis-server on port ${port}`, async () => (await ask(port, 'PING')) === 'PONG', { timeoutMs: 10_000 });
    } catch (error) {
      await server.kill();
      throw new Error(`${(error as Error).message}\n${server.output}`);
    }
    return server;
  }

  get running(): boolean {
    return children.has(this.child);
  }

  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

const QUIET = ['--bind', HOST, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'];

export interface RedisClusterHandle {
  nodes: HostPort[];
  /** The REDIS_CLUSTER_NODES value. */
  setting: string;
  /** DBSIZE of every master, in node order. */
  keysPerNode(): Promise<number[]>;
  stop(): Promise<void>;
}

/**
 * Three (or `masters`) cluster-enabled servers joined by `redis-cli --cluster create`, waited on until
 * the cluster is ok; with `password`, every node requires it (clients and the cluster bus alike).
 */
export async function startRedisCluster(masters = 3, password?: string): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'callbacks-cluster-'));
  const servers: ServerProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const auth = password === undefined ? [] : ['--requirepass', password, '--masterauth', password];
    for (const port of await freePorts(masters)) {
      if (password !== undefined) passwords.set(port, password);
      const args = ['--port', String(port), '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, ...auth];
      servers.push(await ServerProcess.start(port, [...args, '--cluster-node-timeout', '3000', '--dir', dir, ...QUIET]));
    }
    const addresses = servers.map((server) => `${HOST}:${server.port}`);
    // REDISCLI_AUTH rather than -a, which would put the password on a command line.
    await promisify(execFile)('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
      env: { ...process.env, ...(password === undefined ? {} : { REDISCLI_AUTH: password }) },
    });
    for (const server of servers) {
      await waitFor(
        `cluster node ${server.port} to report cluster_state:ok`,
        async () => {
          const info = String(await ask(server.port, 'CLUSTER', 'INFO'));
          return info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${masters}`);
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const nodes = servers.map((server) => ({ host: HOST, port: server.port }));
  return {
    nodes,
    setting: nodes.map((node) => `${node.host}:${node.port}`).join(','),
    keysPerNode: () => Promise.all(servers.map(async (server) => Number(await ask(server.port, 'DBSIZE')))),
    stop,
  };
}

export interface SentinelDeploymentHandle {
  sentinels: HostPort[];
  /** The REDIS_SENTINELS value. */
  setting: string;
  name: string;
  /** Port of the server the sentinels name as primary now. */
  primaryPort(): Promise<number>;
  /** SIGKILLs the current primary (no shutdown, no save): the sentinels must promote the replica. */
  killPrimary(): Promise<number>;
  stop(): Promise<void>;
}

/** A primary, a replica of it and three sentinels (quorum 2) that notice a dead primary within a second. */
export async function startSentinelDeployment(name = 'mymaster'): Promise<SentinelDeploymentHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'callbacks-sentinel-'));
  const servers: ServerProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((server) => server.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  const [primaryPort, replicaPort, ...sentinelPorts] = await freePorts(5);
  const sentinels = sentinelPorts.map((port) => ({ host: HOST, port }));
  const askSentinels = async (...command: string[]): Promise<unknown> => {
    for (const sentinel of sentinels) {
      try {
        return await ask(sentinel.port, ...command);
      } catch {
        // the next sentinel may answer
      }
    }
    throw new Error('no sentinel answers');
  };
  const primaryPortNow = async (): Promise<number> => Number(((await askSentinels('SENTINEL', 'get-master-addr-by-name', name)) as string[])[1]);
  try {
    servers.push(await ServerProcess.start(primaryPort, ['--port', String(primaryPort), '--dir', dir, ...QUIET]));
    servers.push(await ServerProcess.start(replicaPort, ['--port', String(replicaPort), '--replicaof', HOST, String(primaryPort), '--dir', dir, ...QUIET]));
    for (const port of sentinelPorts) {
      const config = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        config,
        [
          `port ${port}`,
          `bind ${HOST}`,
          `dir ${dir}`,
          `sentinel monitor ${name} ${HOST} ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      servers.push(await ServerProcess.start(port, [config, '--sentinel', '--daemonize', 'no', '--loglevel', 'warning']));
    }
    // Ready for a failover once every sentinel knows the replica and the other two sentinels.
    for (const port of sentinelPorts) {
      await waitFor(
        `sentinel ${port} to know the replica and the other sentinels`,
        async () => {
          const replicas = (await ask(port, 'SENTINEL', 'REPLICAS', name)) as unknown[];
          const peers = (await ask(port, 'SENTINEL', 'SENTINELS', name)) as unknown[];
          return replicas.length === 1 && peers.length === sentinelPorts.length - 1;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
    }
    await waitFor('the replica to be in sync', async () => String(await ask(replicaPort, 'INFO', 'replication')).includes('master_link_status:up'));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    sentinels,
    setting: sentinels.map((sentinel) => `${sentinel.host}:${sentinel.port}`).join(','),
    name,
    primaryPort: primaryPortNow,
    killPrimary: async () => {
      const port = await primaryPortNow();
      const server = servers.find((candidate) => candidate.port === port);
      if (!server) throw new Error(`no server of this deployment on port ${port}`);
      await server.kill();
      return port;
    },
    stop,
  };
}
