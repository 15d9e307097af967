import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, startApp, useApps } from './apps';
import { IsolatedNamespace } from './isolated-namespace';
import { TestReceiver } from './receiver';

export interface ShardedQueueSuite {
  readonly namespace: IsolatedNamespace;
  readonly receiver: TestReceiver;
  readonly configApi: RunningApp;
  /** The workers the tests started, in order. */
  readonly workers: RunningApp[];
  /** Starts a worker on the suite's queue, consuming only `shards` when given (WORKER_QUEUE_SHARDS). */
  startWorker(shards?: string): Promise<RunningApp>;
}

/**
 * For the calling file: a delivery queue split in two shards on a database and Redis prefix of the
 * suite's own (no other suite's worker may consume it), config-api and a receiver from the first test
 * on. The tests start the workers, each on the shards it is to consume; they are closed first after the
 * tests, while their database is still there.
 */
export function useShardedQueue(name: string): ShardedQueueSuite {
  const namespace = new IsolatedNamespace(name, { DELIVERY_QUEUE_SHARDS: '2' });
  const shards = { ...namespace.overrides, RECONCILE_INTERVAL: '1m' };
  const receiver = new TestReceiver();
  const workers: RunningApp[] = [];
  beforeAll(async () => {
    await receiver.start();
  });
  afterAll(async () => {
    for (const worker of workers) await worker.close();
    await receiver.stop();
  });
  const { configApi } = useApps({ configApi: [ConfigApiModule, shards] }, { namespace });
  return {
    namespace,
    receiver,
    configApi,
    workers,
    startWorker: async (consumed) => {
      const worker = await startApp(DeliveryWorkerModule, consumed === undefined ? shards : { ...shards, WORKER_QUEUE_SHARDS: consumed });
      workers.push(worker);
      return worker;
    },
  };
}
