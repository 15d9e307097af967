import { jobsWithoutCall } from '../support/metric-scrape';
import { batches, cpuMeter, endToEnd } from './measure';
import { atLeast, type Scenario } from './scenario';

const HEAD_START_MS = 11_000;

/**
 * One endpoint never answers and gets half of the events; the healthy endpoint's delivery rate is
 * compared with its rate when it is alone. Runs late: the hanging endpoint's events stay behind,
 * retried on the default schedule, once it answers again.
 */
export const isolationScenario: Scenario = {
  name: 'isolation',
  title: 'one endpoint that never answers gets half of the events',
  async run(bench) {
    const { healthy, hanging, hangingHost } = bench.isolation;
    const half = bench.size(1_000, 10_000);
    const putBackBefore = await jobsWithoutCall(bench.worker.url, 'busy');
    const alone = await endToEnd(bench, bench.service(undefined, [healthy]), 'isa', half);
    const putBackAlone = (await jobsWithoutCall(bench.worker.url, 'busy')) - putBackBefore;
    const [putBackBeforeHang, skippedBefore] = await Promise.all([jobsWithoutCall(bench.worker.url, 'busy'), jobsWithoutCall(bench.worker.url, 'breaker_open')]);
    await bench.receiver.setMode([hangingHost], 'hang');
    let shared: { deliveredPerSecond: number };
    let headStartCpuMs = 0;
    try {
      if (bench.quick) {
        // Accounts alternate per event, so each endpoint gets exactly `half` of the 2 × half events.
        shared = await endToEnd(bench, bench.service(undefined, [healthy, hanging]), 'isb', half * 2, half);
      } else {
        // The hanging endpoint gets half of its share a DELIVERY_TIMEOUT_MS ahead, so the healthy one
        // is measured while calls time out, the breaker opens and events wait for retries; then
        // healthy, healthy, hanging in turn: `half` events each in all.
        const workerCpu = cpuMeter({ processes: [bench.worker.process] });
        await batches(bench, bench.service(undefined, [hanging]), 'ish', half / 2);
        await new Promise((resolve) => setTimeout(resolve, HEAD_START_MS));
        headStartCpuMs = workerCpu();
        shared = await endToEnd(bench, bench.service(undefined, [healthy, healthy, hanging]), 'isb', half * 1.5, half);
      }
    } finally {
      await bench.receiver.setMode([hangingHost], 'ok');
    }
    const kept = shared.deliveredPerSecond / alone.deliveredPerSecond;
    // What the hanging endpoint's jobs cost the worker meanwhile: trips through the delayed set, and attempts recorded without a call.
    const putBackHanging = (await jobsWithoutCall(bench.worker.url, 'busy')) - putBackBeforeHang;
    const skipped = (await jobsWithoutCall(bench.worker.url, 'breaker_open')) - skippedBefore;
    return {
      name: this.name,
      title: this.title,
      figures: [
        { label: 'healthy endpoint, alone', value: alone.deliveredPerSecond, unit: 'events/s' },
        { label: 'healthy endpoint, beside a hanging one', value: shared.deliveredPerSecond, unit: 'events/s', reference: { label: 'alone', value: alone.deliveredPerSecond } },
        { label: 'rate kept', value: kept, unit: 'ratio', target: atLeast(kept, 0.8, '≥ 0.80 of its rate alone') },
      ],
      notes: [
        `${half} healthy events each time (alone, ${putBackAlone} jobs were put back for a full endpoint); the hanging endpoint held every call it got (DELIVERY_TIMEOUT_MS 10 s) until the measurement ended` +
          (bench.quick ? '' : `; ${half / 2} of its ${half} events came ${HEAD_START_MS / 1000} s before the healthy endpoint's (the worker's CPU meanwhile: ${Math.round(headStartCpuMs)} ms)`),
        `from the hang until the measurement ended, ${putBackHanging} jobs were put back for a full endpoint and ${skipped} attempts were recorded without a call (breaker open)`,
      ],
    };
  },
};
