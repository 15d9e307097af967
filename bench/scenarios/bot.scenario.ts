import { join } from 'node:path';
import type { BodySpec, LoadResult } from '../load/load-plan';
import type { BenchContext } from '../support/bench-context';
import { ipcCall, waitReady } from '../support/ipc';
import type { Figure, Scenario } from './scenario';

const KEY = 'bench-bot-webhook-key-0123456789';
const NAME = 'bench-bot';
const IN_FLIGHT = 16;

async function roundTrips(bench: BenchContext, target: string, path: string, headers: Record<string, string>, body: BodySpec, durationMs: number): Promise<LoadResult> {
  const result = await bench.load.run({
    targets: [target],
    path,
    headers,
    body,
    mode: { kind: 'concurrency', inFlight: IN_FLIGHT, durationMs },
    connections: IN_FLIGHT,
    deadlineMs: durationMs + 60_000,
  });
  if (result.ok !== result.requests) throw new Error(`bot calls to ${path} failed: ${JSON.stringify(result.statuses)} ${result.firstError ?? ''}`);
  return result;
}

/**
 * Message-trigger and task-push calls through ingest to a bot webhook process, against the same
 * webhook called directly (signed the same way) at the same concurrency: round trips per second and
 * the latency the service adds.
 */
export const botScenario: Scenario = {
  name: 'bot',
  title: `bot calls through ingest to a bot webhook process, ${IN_FLIGHT} in flight`,
  async run(bench) {
    const durationMs = bench.size(1_500, 10_000);
    const bot = bench.supervisor.start('bot-webhook', join(__dirname, '..', 'bot', 'bot-webhook.process.js'), { BOT_WEBHOOK_KEY: KEY, INTEGRATION_NAME: NAME });
    try {
      await waitReady(bot.child, 'bot webhook', 15_000);
      const botUrl = `http://127.0.0.1:${await ipcCall<number>(bot.child, 'port', null, 15_000)}`;
      const account = bench.mainAccounts[0] ?? 0;
      for (const [type, path] of [['message_trigger', '/message-trigger'], ['task_push', '/task-push']] as const) {
        await bench.accounts.admin('POST', `/accounts/${account}/bot-webhooks`, { name: NAME, type, url: `${botUrl}${path}`, key: KEY }).catch((error: unknown) => {
          // A second run of this scenario in one bench finds them configured already.
          if (!(error instanceof Error) || !error.message.includes('409')) throw error;
        });
      }
      const ingestHeaders = { authorization: `Bearer ${bench.environment.ingestToken}` };
      const figures: Figure[] = [];
      const notes: string[] = [];
      const kinds = [
        { label: 'message trigger', path: '/message-trigger', via: { kind: 'message-trigger', accountId: account, integrationName: NAME }, direct: { kind: 'direct-message-trigger', integrationName: NAME, key: KEY } },
        { label: 'task push', path: '/task-push', via: { kind: 'task-push', accountId: account, integrationName: NAME }, direct: { kind: 'direct-task-push', key: KEY } },
      ] as const;
      for (const kind of kinds) {
        // One call first: the webhook lookup is cached after it, as in steady operation.
        await roundTrips(bench, bench.ingest.url, `/v1/bot${kind.path}`, ingestHeaders, kind.via, 200);
        const direct = await roundTrips(bench, botUrl, kind.path, {}, kind.direct, durationMs);
        const via = await roundTrips(bench, bench.ingest.url, `/v1/bot${kind.path}`, ingestHeaders, kind.via, durationMs);
        const rate = (result: LoadResult) => result.ok / (result.elapsedMs / 1000);
        figures.push(
          { label: `${kind.label} round trips`, value: rate(via), unit: 'calls/s', reference: { label: 'webhook called directly', value: rate(direct) } },
          { label: `${kind.label} added p50`, value: via.latency.p50 - direct.latency.p50, unit: 'ms' },
          { label: `${kind.label} added p99`, value: via.latency.p99 - direct.latency.p99, unit: 'ms' },
        );
        notes.push(`${kind.label}: through ingest p50 ${via.latency.p50.toFixed(1)} ms / p99 ${via.latency.p99.toFixed(1)} ms; direct p50 ${direct.latency.p50.toFixed(1)} ms / p99 ${direct.latency.p99.toFixed(1)} ms`);
      }
      notes.push('no target in the issue');
      return { name: this.name, title: this.title, figures, notes };
    } finally {
      await bot.stop();
    }
  },
};
