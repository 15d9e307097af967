import { waitFor } from '../../test/support/wait-for';
import type { BenchContext } from '../support/bench-context';
import { jobsWithoutCall } from '../support/metric-scrape';
import { batches, cpuMeter, settleMs } from './measure';
import type { Scenario } from './scenario';

/** The framework-free pipeline's drain: `total` events stored and queued with no worker running, then one process delivering them. */
async function baselineDrain(bench: BenchContext, total: number): Promise<{ perSecond: number; cpuUsPerEvent: number }> {
  const ingest = await bench.baseline.ingestOnly();
  try {
    await batches(bench, { label: 'baseline ingest', urls: [ingest.url], eventPath: '/events', batchPath: '/events/batch', headers: bench.baseline.headers, accounts: bench.baseline.accounts, processes: [ingest.process] }, 'bbk', total);
  } finally {
    await ingest.process.stop();
  }
  const started = performance.timeOrigin + performance.now();
  await bench.baseline.use(1);
  const arrived = await bench.receiver.waitFor('bbk', total, settleMs(total));
  // From the process's start: its start-up is in it, a few ms per run.
  const cpuUsPerEvent = (bench.baseline.processes().reduce((sum, entry) => sum + (entry.cpuMs() ?? 0), 0) * 1000) / total;
  await bench.receiver.forget('bbk');
  return { perSecond: total / (((arrived.last ?? started) - started) / 1000), cpuUsPerEvent };
}

/**
 * A receiver down while events pile up, then back: what an operator sees after an outage. While the
 * 20 endpoints answer 503 the worker runs with RETRY_SCHEDULE=1s, so every stored event ends
 * `failed` within seconds (the breaker opens after five calls; later attempts make no call). Then the
 * receiver is up again, the worker is back on its default settings, and one bulk redelivery
 * (`POST /admin/v1/events/redeliver {"status":"failed"}`) sends the whole backlog: the drain rate is
 * from that request to the last callback.
 */
export const backlogScenario: Scenario = {
  name: 'backlog',
  title: '100,000 events stored while the receiver is down, then the drain once it is up',
  async run(bench) {
    const total = bench.size(2_000, 100_000);
    const since = new Date(Date.now() - 1_000).toISOString();
    await bench.restartWorker({ RETRY_SCHEDULE: '1s' });
    await bench.receiver.setMode(bench.mainHosts, 'down');
    let stored: number;
    try {
      stored = (await batches(bench, bench.service(), 'bk', total)).acceptedPerSecond;
      await waitFor(`${total} backlog events to be failed`, async () => {
        const stats = await bench.accounts.admin('GET', `/stats?since=${encodeURIComponent(since)}`);
        const failed = Number((stats.counts as Record<string, number> | undefined)?.failed ?? 0);
        if (failed >= total) return true;
        throw new Error(`${failed} failed so far`);
      }, { timeoutMs: 60_000 + total * 20, intervalMs: 1_000 });
    } finally {
      await bench.receiver.setMode(bench.mainHosts, 'ok');
    }
    await bench.restartWorker();
    const refused = (await bench.receiver.stats('bk')).refused;
    const cpu = cpuMeter({ processes: [bench.worker.process, bench.configApi.process] });
    const started = performance.timeOrigin + performance.now();
    const putBack = () => Promise.all([jobsWithoutCall(bench.worker.url, 'busy'), jobsWithoutCall(bench.worker.url, 'paced')]);
    const [busyBefore, pacedBefore] = await putBack();
    const task = await bench.accounts.admin('POST', '/events/redeliver', { status: 'failed', since });
    const arrived = await bench.receiver.waitFor('bk', total, 120_000 + total * 20);
    const [busyAfter, pacedAfter] = await putBack();
    await bench.receiver.forget('bk');
    const drained = total / (((arrived.last ?? started) - started) / 1000);
    const cpuUsPerEvent = (cpu() * 1000) / total;
    const baseline = await bench.baseline.once('backlog', () => baselineDrain(bench, total));
    return {
      name: this.name,
      title: this.title,
      figures: [
        { label: 'stored while down', value: stored, unit: 'events/s' },
        { label: 'drained once up', value: drained, unit: 'events/s', reference: { label: 'baseline ×1 draining the same backlog', value: baseline.perSecond } },
        { label: 'CPU per event, worker + config-api', value: cpuUsPerEvent, unit: 'µs', reference: { label: 'baseline ×1', value: baseline.cpuUsPerEvent } },
      ],
      notes: [`${total} events over 20 endpoints; ${refused} calls refused while down (the breakers opened); redelivery task matched ${String(task.count)}; during the drain the worker put back ${busyAfter - busyBefore} jobs for a full endpoint and ${pacedAfter - pacedBefore} for the pace; no target in the issue`],
    };
  },
};
