import type { ServiceTarget } from '../support/bench-context';
import { startCost } from '../support/cost-per-event';
import { batches, singlePosts } from './measure';
import { atLeast, atMost, type Scenario } from './scenario';

/** Issue 36: a single event's CPU over all four processes (apps, PostgreSQL, Redis) at most this many times the baseline's. */
export const SINGLE_CPU_BOUND = 1.2;

export const singlePostScenario: Scenario = {
  name: 'single-post',
  title: 'single-event POST /v1/events, 32 keep-alive connections (worker delivering meanwhile)',
  async run(bench) {
    const durationMs = bench.size(3_000, 20_000);
    const service = await singlePosts(bench, bench.service(), 'sp', 32, durationMs);
    const baseline = await bench.baseline.once('single-post', async () => singlePosts(bench, await bench.baselineTarget(1), 'bsp', 32, durationMs));
    const reference = (value: number) => ({ label: bench.baseline.label(1), value });
    return {
      name: this.name,
      title: this.title,
      figures: [
        { label: 'accepted', value: service.acceptedPerSecond, unit: 'events/s', reference: reference(baseline.acceptedPerSecond), target: atLeast(service.acceptedPerSecond, 3_000, '≥ 3,000/s') },
        { label: 'request p50', value: service.latency.p50, unit: 'ms', reference: reference(baseline.latency.p50) },
        { label: 'request p99', value: service.latency.p99, unit: 'ms', reference: reference(baseline.latency.p99), target: atMost(service.latency.p99, 50, 'p99 ≤ 50 ms') },
        { label: 'CPU per event, ingest + worker', value: service.cpuUsPerEvent, unit: 'µs', reference: reference(baseline.cpuUsPerEvent) },
        {
          label: 'CPU per event, all processes (apps, PostgreSQL, Redis)',
          value: service.cost.totalUs,
          unit: 'µs',
          reference: reference(baseline.cost.totalUs),
          target: atMost(service.cost.totalUs, SINGLE_CPU_BOUND * baseline.cost.totalUs, `≤ ${SINGLE_CPU_BOUND}× the baseline's (issue 36)`),
        },
        // The baseline's one process also delivers meanwhile, so it is no reference for ingest alone.
        { label: 'CPU per request, ingest alone, while posting', value: service.firstCpuUsPerEvent, unit: 'µs' },
      ],
      costs: [
        { label: 'service', cost: service.cost },
        { label: bench.baseline.label(1), cost: baseline.cost },
      ],
      notes: [`${service.result.requests} requests in ${(durationMs / 1000).toFixed(0)} s, answers ${JSON.stringify(service.result.statuses)}, all delivered before the next scenario`],
    };
  },
};

export const batchScenario: Scenario = {
  name: 'batch',
  title: 'POST /v1/events/batch, batches of 500, 4 in flight (worker delivering meanwhile)',
  async run(bench) {
    const total = bench.size(5_000, 25_000);
    // Posting and the deliveries that follow: what the accepted events cost in the end.
    const measure = async (target: ServiceTarget, tag: string) => {
      const meter = await startCost(bench.environment, target.processes);
      const measured = await batches(bench, target, tag, total);
      await bench.receiver.waitFor(tag, total, 60_000 + total * 10);
      const cost = await meter.stop(total);
      await bench.receiver.forget(tag);
      return { ...measured, cost };
    };
    const service = await measure(bench.service(), 'bt');
    const baseline = await bench.baseline.once('batch', async () => measure(await bench.baselineTarget(1), 'bbt'));
    return {
      name: this.name,
      title: this.title,
      figures: [
        {
          label: 'accepted',
          value: service.acceptedPerSecond,
          unit: 'events/s',
          reference: { label: bench.baseline.label(1), value: baseline.acceptedPerSecond },
          target: atLeast(service.acceptedPerSecond, 10_000, '≥ 10,000/s'),
        },
        { label: 'request p50 (500 events)', value: service.result.latency.p50, unit: 'ms', reference: { label: bench.baseline.label(1), value: baseline.result.latency.p50 } },
        // Who had the 2 cores while the batches were sent: ingest, and the worker delivering meanwhile.
        { label: 'CPU per event while posting, ingest alone', value: service.cpuUsPerEventByProcess[0] ?? null, unit: 'µs' },
        { label: 'CPU per event while posting, worker alone', value: service.cpuUsPerEventByProcess[1] ?? null, unit: 'µs' },
      ],
      notes: [`${total} events`],
      costs: [
        { label: 'service, posting and delivering', cost: service.cost },
        { label: `${bench.baseline.label(1)}, posting and delivering`, cost: baseline.cost },
      ],
    };
  },
};
