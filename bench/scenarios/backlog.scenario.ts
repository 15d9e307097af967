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
 * 20 endpoints answer 503 their breakers open after a few calls and hold the rest of the backlog
 * without a call or an attempt (CONTRACT §5). Then the receiver is up again: each breaker's probe after
 * its cooldown succeeds, and the held deliveries go back to the queue in accepted order, no more at a
 * time than REQUEUE_MAX_WAITING. The drain rate is from the moment the receiver is up to the last
 * callback, cooldowns included.
 */
export const backlogScenario: Scenario = {
  name: 'backlog',
  title: '100,000 events stored while the receiver is down, then the drain once it is up',
  async run(bench) {
    const total = bench.size(2_000, 100_000);
    await bench.receiver.setMode(bench.mainHosts, 'down');
    let stored: number;
    try {
      stored = (await batches(bench, bench.service(), 'bk', total)).acceptedPerSecond;
    } finally {
      await bench.receiver.setMode(bench.mainHosts, 'ok');
    }
    const refused = (await bench.receiver.stats('bk')).refused;
    const cpu = cpuMeter({ processes: [bench.worker.process, bench.configApi.process] });
    const started = performance.timeOrigin + performance.now();
    const putBack = () => Promise.all([jobsWithoutCall(bench.worker.url, 'busy'), jobsWithoutCall(bench.worker.url, 'paced')]);
    const [busyBefore, pacedBefore] = await putBack();
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
        { label: 'drained once up', value: drained, unit: 'events/s', reference: { label: `${bench.baseline.label(1)} draining the same backlog`, value: baseline.perSecond } },
        { label: 'CPU per event, worker + config-api', value: cpuUsPerEvent, unit: 'µs', reference: { label: bench.baseline.label(1), value: baseline.cpuUsPerEvent } },
      ],
      notes: [`${total} events over 20 endpoints; ${refused} calls refused while down (then the breakers held the rest); during the drain the worker put back ${busyAfter - busyBefore} jobs for a full endpoint and ${pacedAfter - pacedBefore} for the pace; no target in the issue`],
    };
  },
};
