import { jobsWithoutCall } from '../support/metric-scrape';
import { redisText, withRedisCounts } from '../support/redis-stats';
import { endToEnd } from './measure';
import { atLeast, type Scenario } from './scenario';

/** Issue 19: end to end at least this share of the framework-free pipeline's rate, and one endpoint of the fanout's. */
export const SHARE_TARGET = 0.85;
/** Issue 8: two ingests and two workers at least this share of two baseline processes. */
export const SCALED_SHARE_TARGET = 0.6;
import type { BenchContext, ServiceTarget } from '../support/bench-context';

/** endToEnd with the Redis commands and bytes per delivery around it. */
async function countedEndToEnd(bench: BenchContext, target: ServiceTarget, tag: string, total: number) {
  const { result, redis } = await withRedisCounts(bench.environment.redisUrl, () => endToEnd(bench, target, tag, total), () => total);
  return { ...result, redis };
}

/** The framework-free pipeline end to end with `processes` processes over the 20 endpoints (measured once per run). */
export function baselineEndToEnd(bench: BenchContext, processes: number, total: number) {
  return bench.baseline.once(`e2e-${processes}`, async () => countedEndToEnd(bench, await bench.baselineTarget(processes), `be${processes}`, total));
}

/** The service's end-to-end figure of this run (one ingest, one worker), measured once: the backlog drain compares against it. */
export function steadyEndToEnd(bench: BenchContext) {
  return bench.serviceFigures.once('end-to-end', () => countedEndToEnd(bench, bench.service(), 'e2e', bench.size(4_000, 20_000)));
}

export const endToEndScenario: Scenario = {
  name: 'end-to-end',
  title: '20,000 events for 20 endpoints (distinct origins), ingest → delivered, one ingest and one worker',
  async run(bench) {
    const total = bench.size(4_000, 20_000);
    const service = await steadyEndToEnd(bench);
    const baseline = await baselineEndToEnd(bench, 1, total);
    const share = service.deliveredPerSecond / baseline.deliveredPerSecond;
    return {
      name: this.name,
      title: this.title,
      figures: [
        { label: 'delivered', value: service.deliveredPerSecond, unit: 'events/s', reference: { label: bench.baseline.label(1), value: baseline.deliveredPerSecond }, target: atLeast(service.deliveredPerSecond, 3_000, '≥ 3,000/s with one worker') },
        { label: 'share of the baseline', value: share, unit: 'ratio', target: atLeast(share, SHARE_TARGET, `≥ ${SHARE_TARGET.toFixed(2)} of the framework-free pipeline (issue 19)`) },
        { label: 'CPU per event, ingest + worker', value: service.cpuUsPerEvent, unit: 'µs', reference: { label: bench.baseline.label(1), value: baseline.cpuUsPerEvent } },
        { label: 'CPU per event, all processes (apps, PostgreSQL, Redis)', value: service.cost.totalUs, unit: 'µs', reference: { label: bench.baseline.label(1), value: baseline.cost.totalUs } },
        { label: 'Redis commands per delivery', value: service.redis.commands, unit: 'commands', reference: { label: bench.baseline.label(1), value: baseline.redis.commands } },
        { label: 'Redis bytes per delivery (in + out)', value: service.redis.inputBytes + service.redis.outputBytes, unit: 'bytes', reference: { label: bench.baseline.label(1), value: baseline.redis.inputBytes + baseline.redis.outputBytes } },
      ],
      notes: [
        `${total} events (${service.duplicates} duplicate arrivals); accepted at ${Math.round(service.acceptedPerSecond)}/s while delivering`,
        redisText('service', service.redis),
        redisText(bench.baseline.label(1), baseline.redis),
      ],
      costs: [
        { label: 'service', cost: service.cost },
        { label: bench.baseline.label(1), cost: baseline.cost },
      ],
    };
  },
};

export const scaledEndToEndScenario: Scenario = {
  name: 'end-to-end-scaled',
  title: 'the same with two ingests and two workers (the baseline with two processes)',
  async run(bench) {
    const total = bench.size(4_000, 20_000);
    const [ingest, worker] = await Promise.all([bench.stack.start('ingest'), bench.stack.start('delivery-worker')]);
    try {
      const ingestUrls = [bench.ingest.url, ingest.url];
      await bench.warmUp(ingestUrls);
      const workerUrls = [bench.worker.url, worker.url];
      const putBack = () => Promise.all(workerUrls.map((url) => jobsWithoutCall(url, 'busy')));
      const putBackBefore = await putBack();
      const service = await endToEnd(bench, bench.service(ingestUrls, undefined, [ingest, worker]), 'e2s', total);
      const putBackAfter = await putBack();
      const baseline = await baselineEndToEnd(bench, 2, total);
      const share = service.deliveredPerSecond / baseline.deliveredPerSecond;
      return {
        name: this.name,
        title: this.title,
        figures: [
          { label: 'delivered', value: service.deliveredPerSecond, unit: 'events/s', reference: { label: bench.baseline.label(2), value: baseline.deliveredPerSecond } },
          { label: 'share of the baseline', value: share, unit: 'ratio', target: atLeast(share, SCALED_SHARE_TARGET, `≥ ${SCALED_SHARE_TARGET.toFixed(2)} of the framework-free pipeline (issue 8)`) },
          { label: 'CPU per event, 2 ingests + 2 workers', value: service.cpuUsPerEvent, unit: 'µs', reference: { label: bench.baseline.label(2), value: baseline.cpuUsPerEvent } },
        ],
        notes: [`${total} events, batches spread over both ingests; the workers put back ${putBackAfter.map((after, index) => after - putBackBefore[index]).join(' + ')} jobs for a full endpoint`],
        costs: [
          { label: 'service, 2 + 2', cost: service.cost },
          { label: bench.baseline.label(2), cost: baseline.cost },
        ],
      };
    } finally {
      await Promise.all([ingest.process.stop(30_000), worker.process.stop(30_000)]);
    }
  },
};

export const oneEndpointScenario: Scenario = {
  name: 'one-endpoint',
  title: '10,000 events for one endpoint, default ENDPOINT_CONCURRENCY (10)',
  async run(bench) {
    const total = bench.size(2_000, 10_000);
    const putBack = () => Promise.all([jobsWithoutCall(bench.worker.url, 'busy'), jobsWithoutCall(bench.worker.url, 'paced')]);
    const [busyBefore, pacedBefore] = await putBack();
    const service = await endToEnd(bench, bench.service(undefined, [bench.singleEndpoint.account]), 'one', total);
    const [busyAfter, pacedAfter] = await putBack();
    const baseline = await bench.baseline.once('one-endpoint', async () => {
      const target = await bench.baselineTarget(1);
      return endToEnd(bench, { ...target, accounts: [target.accounts[0] ?? 1] }, 'bone', total);
    });
    const fanout = (await steadyEndToEnd(bench)).deliveredPerSecond;
    const ofFanout = service.deliveredPerSecond / fanout;
    return {
      name: this.name,
      title: this.title,
      figures: [
        {
          label: 'delivered',
          value: service.deliveredPerSecond,
          unit: 'events/s',
          reference: { label: `${bench.baseline.label(1)}, one endpoint, 10 connections`, value: baseline.deliveredPerSecond },
          target: atLeast(service.deliveredPerSecond, 2_000, '≥ 2,000/s'),
        },
        {
          label: 'share of the service end to end (20 endpoints)',
          value: ofFanout,
          unit: 'ratio',
          target: atLeast(ofFanout, SHARE_TARGET, `≥ ${SHARE_TARGET.toFixed(2)} of the fanout figure (issue 19)`),
        },
        { label: 'CPU per event, ingest + worker', value: service.cpuUsPerEvent, unit: 'µs', reference: { label: `${bench.baseline.label(1)}, one endpoint`, value: baseline.cpuUsPerEvent } },
      ],
      notes: [`the service's end to end of this run (the fanout figure): ${Math.round(fanout)} events/s`, `${total} events; the worker put back ${busyAfter - busyBefore} jobs for a full endpoint and ${pacedAfter - pacedBefore} for the pace`],
      costs: [
        { label: 'service', cost: service.cost },
        { label: `${bench.baseline.label(1)}, one endpoint`, cost: baseline.cost },
      ],
    };
  },
};
