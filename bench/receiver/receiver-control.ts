import { join } from 'node:path';
import { ipcCall, waitReady } from '../support/ipc';
import type { ProcessSupervisor, SupervisedProcess } from '../support/process-supervisor';
import { waitFor } from '@app/testing';

/** slow / crawl: 200 after 40 / 400 ms, so an endpoint's capacity is ENDPOINT_CONCURRENCY / 40 ms (or / 400 ms). */
export type ReceiverMode = 'ok' | 'hang' | 'down' | 'slow' | 'crawl';

export interface ArrivalStats {
  /** Distinct webhook-ids that arrived (answered 200). */
  unique: number;
  duplicates: number;
  /** Calls answered 503 while the address was down. */
  refused: number;
  /** Wall-clock ms of the first and last distinct arrival. */
  first: number | null;
  last: number | null;
  /** Wall-clock ms of the last call answered 200, whether or not its id had arrived before. */
  lastCall: number | null;
  /** Calls answered 200 per address, repeats included. */
  byHost: Record<string, number>;
}

/** The receiver process as the bench sees it: where it listens and what it got. */
export class ReceiverControl {
  private constructor(
    private readonly process: SupervisedProcess,
    readonly port: number,
    readonly hosts: readonly string[],
  ) {}

  /** Loopback addresses 127.0.0.2 … 127.0.0.(count+1), each its own origin. */
  static async start(supervisor: ProcessSupervisor, count: number): Promise<ReceiverControl> {
    const hosts = Array.from({ length: count }, (_, index) => `127.0.0.${index + 2}`);
    const child = supervisor.start('receiver', join(__dirname, 'receiver.process.js'), { RECEIVER_HOSTS: hosts.join(',') });
    await waitReady(child.child, 'receiver', 15_000);
    const port = await ipcCall<number>(child.child, 'port', null, 15_000);
    return new ReceiverControl(child, port, hosts);
  }

  url(host: string): string {
    return `http://${host}:${this.port}/callbacks`;
  }

  stats(tag: string): Promise<ArrivalStats> {
    return ipcCall<ArrivalStats>(this.process.child, 'stats', { tag }, 15_000);
  }

  /** First arrival time of every webhook-id of `tag`. */
  async arrivals(tag: string): Promise<Map<string, number>> {
    const { ids, at } = await ipcCall<{ ids: string[]; at: number[] }>(this.process.child, 'arrivals', { tag }, 30_000);
    return new Map(ids.map((id, index) => [id, at[index] ?? 0]));
  }

  async forget(tag: string): Promise<void> {
    await ipcCall(this.process.child, 'forget', { tag }, 15_000);
  }

  /** Waits until the calls of `tag` answered 200 at `hosts` add up to `count` (one event sent to several destinations counts once per host). */
  async waitForCalls(tag: string, hosts: readonly string[], count: number, timeoutMs: number): Promise<ArrivalStats> {
    return waitFor(`${count} calls tagged ${tag} at ${hosts.join(', ')}`, async () => {
      const stats = await this.stats(tag);
      const calls = hosts.reduce((sum, host) => sum + (stats.byHost[host] ?? 0), 0);
      if (calls >= count) return stats;
      throw new Error(`${calls} calls arrived, ${stats.refused} refused`);
    }, { timeoutMs, intervalMs: 100 });
  }

  async setMode(hosts: readonly string[], mode: ReceiverMode): Promise<void> {
    await ipcCall(this.process.child, 'mode', { hosts, mode }, 15_000);
  }

  /** Waits until `count` distinct callbacks of `tag` arrived; fails with what did arrive after `timeoutMs`. */
  async waitFor(tag: string, count: number, timeoutMs: number): Promise<ArrivalStats> {
    return waitFor(`${count} callbacks tagged ${tag}`, async () => {
      const stats = await this.stats(tag);
      if (stats.unique >= count) return stats;
      throw new Error(`${stats.unique} arrived, ${stats.refused} refused`);
    }, { timeoutMs, intervalMs: 100 });
  }
}
