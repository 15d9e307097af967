import type { BenchContext } from '../support/bench-context';
import { RssSampler } from '../support/rss-sampler';
import { steadyEndToEnd } from './delivery.scenarios';
import { batches, cpuMeter, settleMs } from './measure';
import { atLeast, atMost, type Figure, type Scenario } from './scenario';

const MB = 1024 * 1024;
/** Events per load run while storing: batches() gives one run 5 minutes, and a tag's ids must stay unique. */
const CHUNK = 100_000;

/** Stores `total` events through ingest (stored and queued) in chunks tagged `<tag><n>`; answers the tags and events stored per second. */
async function storeBacklog(bench: BenchContext, tag: string, total: number): Promise<{ tags: Array<{ tag: string; count: number }>; perSecond: number }> {
  const tags: Array<{ tag: string; count: number }> = [];
  const started = performance.now();
  for (let offset = 0; offset < total; offset += CHUNK) {
    const count = Math.min(CHUNK, total - offset);
    const chunkTag = `${tag}${tags.length}`;
    await batches(bench, bench.service(), chunkTag, count);
    tags.push({ tag: chunkTag, count });
  }
  return { tags, perSecond: total / ((performance.now() - started) / 1000) };
}

/**
 * Issue 19's backlog: events stored and queued while no worker runs (ingest as in production, the
 * receiver up), then one worker started to drain them. The drain rate runs from the first callback to
 * the last (the worker's start-up is not in it), against the steady end-to-end rate of the same run
 * (the end-to-end scenario's figure, measured here when that scenario did not run). The worker's RSS
 * is sampled through the drain: start, peak and end.
 */
export const backlogDrainScenario: Scenario = {
  name: 'backlog-drain',
  title: '1,000,000 events stored with no worker running, then drained by one worker: rate against the steady end to end, worker RSS',
  async run(bench) {
    const total = bench.size(20_000, 1_000_000);
    const steady = await steadyEndToEnd(bench);
    await bench.worker.process.stop(30_000);
    const stored = await storeBacklog(bench, 'bd', total);

    await bench.restartWorker();
    const cpu = cpuMeter({ processes: [bench.worker.process] });
    const rss = new RssSampler([bench.worker.process]);
    let first = Infinity;
    let last = 0;
    try {
      for (const { tag, count } of stored.tags) {
        const arrived = await bench.receiver.waitFor(tag, count, settleMs(count));
        first = Math.min(first, arrived.first ?? Infinity);
        last = Math.max(last, arrived.last ?? 0);
      }
    } finally {
      rss.stop();
    }
    const cpuUsPerEvent = (cpu() * 1000) / total;
    await Promise.all(stored.tags.map(({ tag }) => bench.receiver.forget(tag)));
    const drained = Number.isFinite(first) && last > first ? (total - 1) / ((last - first) / 1000) : null;
    const share = drained === null ? null : drained / steady.deliveredPerSecond;
    const memory = rss.startPeakEnd(bench.worker.process.name);
    // "Flat" as the memory scenario reads it: peaks, not single samples, so a collection's sawtooth does not decide it.
    const growth = rss.peakGrowth(bench.worker.process.name, 0);
    const mb = (bytes: number | undefined): number | null => (bytes === undefined ? null : bytes / MB);
    const figures: Figure[] = [
      { label: 'stored with no worker', value: stored.perSecond, unit: 'events/s' },
      { label: 'drained', value: drained, unit: 'events/s', reference: { label: 'steady end to end, this run', value: steady.deliveredPerSecond } },
      { label: 'share of the steady rate', value: share, unit: 'ratio', target: atLeast(share, 0.9, '≥ 0.90 of steady end to end') },
      { label: 'worker RSS at drain start', value: mb(memory?.start), unit: 'MB' },
      { label: 'worker RSS peak', value: mb(memory?.peak), unit: 'MB' },
      { label: 'worker RSS at drain end', value: mb(memory?.end), unit: 'MB' },
      { label: 'worker RSS peak growth, last third of the drain over the first', value: growth, unit: '%', target: atMost(growth, 10, '≤ 10% (flat, issue 48)') },
      { label: 'worker CPU per event', value: cpuUsPerEvent, unit: 'µs' },
    ];
    return {
      name: this.name,
      title: this.title,
      figures,
      notes: [`${total} events over 20 endpoints, stored through ingest's batches; RSS sampled every 250 ms from the worker's ready answer to the last callback`],
    };
  },
};
