import type { BenchContext } from '../support/bench-context';
import { jobsWithoutCall } from '../support/metric-scrape';
import { batches, settleMs } from './measure';
import { atLeast, atMost, type Figure, type Scenario } from './scenario';
import { busiestWindow } from '@app/testing';

/** The paces the e2e test (test/ordering/delivery-pace-schedule.e2e-spec.ts, 1–50/s) does not reach on a test machine. */
const PACES = [200, 1_000] as const;
/** Calls enough for two 10 s windows after the first tenth. */
const SECONDS_OF_CALLS = 12;
const WINDOW_MS = 10_000;

async function setPace(bench: BenchContext, perSecond: number | null): Promise<void> {
  const view = await bench.accounts.admin('PUT', `/accounts/${bench.singleEndpoint.account}/delivery-options`, { max_per_second: perSecond });
  if (view.max_per_second !== perSecond) throw new Error(`the pace was not stored: ${JSON.stringify(view)}`);
  // The change reaches the workers by a Redis notice (docs/delivery-options.md); give it a moment to land.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}

/** Jobs the workers took and put back without a call, for the pace and for a full endpoint, summed over `workerUrls`. */
async function putBack(workerUrls: readonly string[]): Promise<{ paced: number; busy: number }> {
  const counts = await Promise.all(workerUrls.map(async (url) => ({ paced: await jobsWithoutCall(url, 'paced'), busy: await jobsWithoutCall(url, 'busy') })));
  return counts.reduce((sum, count) => ({ paced: sum.paced + count.paced, busy: sum.busy + count.busy }), { paced: 0, busy: 0 });
}

/** One paced run (or, `paced` false, the same events with no pace set): 12 s worth of events in batches to the one-endpoint account; the calls' start pace and busiest 10 s. */
async function pacedRun(bench: BenchContext, perSecond: number, workerUrls: readonly string[], paced = true) {
  const workers = workerUrls.length;
  const before = await putBack(workerUrls);
  // Event ids are the tag and a number: a tag used twice would make repeats, which are never delivered again.
  const tag = `pace${paced ? perSecond : 'free'}w${workers}`;
  const total = perSecond * SECONDS_OF_CALLS;
  await batches(bench, bench.service(undefined, [bench.singleEndpoint.account]), tag, total);
  await bench.receiver.waitFor(tag, total, settleMs(total));
  const arrivals = [...(await bench.receiver.arrivals(tag)).values()].sort((a, b) => a - b);
  await bench.receiver.forget(tag);
  // From the arrival a tenth in: the burst has reached the schedule by then.
  const from = Math.floor(arrivals.length / 10);
  const spanMs = arrivals[arrivals.length - 1] - arrivals[from];
  const achieved = spanMs > 0 ? (arrivals.length - 1 - from) / (spanMs / 1000) : null;
  const busiest = busiestWindow(arrivals, WINDOW_MS) / (WINDOW_MS / 1000);
  const after = await putBack(workerUrls);
  return { achieved, busiest, putBack: { paced: after.paced - before.paced, busy: after.busy - before.busy } };
}

/**
 * CONTRACT §9's pace, kept: with max_per_second set, calls start at ≥ 90 % of it while the endpoint
 * answers promptly, and at most 5 % above it over any 10 s window, with one worker and with two. The
 * same events unpaced, in the same run, measure what the machine can do for this one endpoint: a pace
 * above that is held to ≥ 90 % of that rate instead (the schedule cannot start calls the machine
 * cannot make), and the table shows both.
 */
export const paceScenario: Scenario = {
  name: 'pace',
  title: 'max_per_second 200 and 1,000 on one endpoint answering at once, one worker and two: calls started per second against the pace',
  async run(bench) {
    const figures: Figure[] = [];
    const notes: string[] = [];
    try {
      for (const workers of [1, 2]) {
        const extra = workers === 2 ? await bench.stack.start('delivery-worker') : null;
        const workerUrls = extra ? [bench.worker.url, extra.url] : [bench.worker.url];
        try {
          const workersText = `${workers} worker${workers === 1 ? '' : 's'}`;
          await setPace(bench, null);
          const unpaced = (await pacedRun(bench, PACES[PACES.length - 1], workerUrls, false)).achieved;
          notes.push(`unpaced, ${workersText}: ${unpaced?.toFixed(1) ?? '–'} calls/s to the same endpoint (the machine's rate for it in this run)`);
          for (const perSecond of PACES) {
            await setPace(bench, perSecond);
            const { achieved, busiest, putBack: back } = await pacedRun(bench, perSecond, workerUrls);
            const share = achieved === null ? null : achieved / perSecond;
            const reachable = unpaced === null ? perSecond : Math.min(perSecond, unpaced);
            const shareOfReachable = achieved === null ? null : achieved / reachable;
            const over = busiest / perSecond;
            const who = `${perSecond}/s, ${workersText}`;
            figures.push(
              { label: `${who}: calls/s ÷ pace`, value: share, unit: 'ratio' },
              {
                label: `${who}: calls/s ÷ min(pace, unpaced rate)`,
                value: shareOfReachable,
                unit: 'ratio',
                target: atLeast(shareOfReachable, 0.9, '≥ 0.90 (CONTRACT §9, of what the machine reaches unpaced)'),
              },
              { label: `${who}: busiest 10 s ÷ pace`, value: over, unit: 'ratio', target: atMost(over, 1.05, '≤ 1.05 (CONTRACT §9)') },
            );
            notes.push(`${who}: ${perSecond * SECONDS_OF_CALLS} events, ${achieved?.toFixed(1) ?? '–'} calls/s after the first tenth, ${busiest.toFixed(1)}/s in the busiest 10 s; jobs put back ${back.paced} for the pace, ${back.busy} for a full endpoint`);
          }
        } finally {
          await extra?.process.stop(30_000);
        }
      }
    } finally {
      await setPace(bench, null);
    }
    return { name: this.name, title: this.title, figures, notes };
  },
};
