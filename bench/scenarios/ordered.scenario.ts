import type { BenchContext } from '../support/bench-context';
import { jobsWithoutCall, metricSample } from '../support/metric-scrape';
import { endToEnd } from './measure';
import { atLeast, type Scenario } from './scenario';

/** Customers the events are about, in turn over the 20 endpoints (50 per endpoint). */
const SUBJECTS = 1_000;

async function setOrdering(bench: BenchContext, ordering: 'none' | 'subject'): Promise<void> {
  await Promise.all(bench.mainAccounts.map((account) => bench.accounts.admin('PUT', `/accounts/${account}/delivery-options`, { ordering })));
  // The change reaches the workers by a Redis notice (docs/delivery-options.md); give it a moment to land.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}

/** Jobs the worker took and put back because an earlier event of their subject was still pending. */
const heldBySubject = (bench: BenchContext): Promise<number> => jobsWithoutCall(bench.worker.url, 'held_by_subject');
/** Jobs put back because their endpoint's slots were all taken: each comes back later, behind the next events of its subject. */
const busy = (bench: BenchContext): Promise<number> => jobsWithoutCall(bench.worker.url, 'busy');

const RELEASE_OUTCOMES = ['promoted', 'not_delayed', 'waiting_here', 'waiting_alone', 'none', 'self'] as const;

/** The worker's releases of held events by outcome (delivery.metrics.ts `callback_subject_releases_total`). */
async function releases(bench: BenchContext): Promise<number[]> {
  return Promise.all(RELEASE_OUTCOMES.map(async (outcome) => (await metricSample(bench.worker.url, `callback_subject_releases_total{outcome="${outcome}"}`)) ?? 0));
}

/**
 * Ordering "subject" (CONTRACT §9) against the same load unordered, measured one after the other in
 * the same run (issue 15: ordered ≥ 80% of unordered throughput).
 */
export const orderedScenario: Scenario = {
  name: 'ordered',
  title: 'ordering "subject" with 1,000 subjects over 20 endpoints vs the same load unordered, ingest → delivered',
  async run(bench) {
    const total = bench.size(4_000, 20_000);
    const unordered = await endToEnd(bench, bench.service(), 'ou', total, total, SUBJECTS);
    let ordered: Awaited<ReturnType<typeof endToEnd>>;
    let holds = 0;
    let busyBack = 0;
    let released: number[] = [];
    await setOrdering(bench, 'subject');
    try {
      const [holdsBefore, busyBefore, releasesBefore] = await Promise.all([heldBySubject(bench), busy(bench), releases(bench)]);
      ordered = await endToEnd(bench, bench.service(), 'os', total, total, SUBJECTS);
      const [holdsAfter, busyAfter, releasesAfter] = await Promise.all([heldBySubject(bench), busy(bench), releases(bench)]);
      holds = holdsAfter - holdsBefore;
      busyBack = busyAfter - busyBefore;
      released = releasesAfter.map((count, index) => count - (releasesBefore[index] ?? 0));
    } finally {
      await setOrdering(bench, 'none');
    }
    const share = ordered.deliveredPerSecond / unordered.deliveredPerSecond;
    return {
      name: this.name,
      title: this.title,
      figures: [
        { label: 'delivered, unordered', value: unordered.deliveredPerSecond, unit: 'events/s' },
        { label: 'delivered, ordering "subject"', value: ordered.deliveredPerSecond, unit: 'events/s', reference: { label: 'unordered', value: unordered.deliveredPerSecond } },
        { label: 'ordered ÷ unordered', value: share, unit: 'ratio', target: atLeast(share, 0.8, '≥ 0.80 of unordered') },
        { label: 'CPU per event, ordered', value: ordered.cpuUsPerEvent, unit: 'µs', reference: { label: 'unordered', value: unordered.cpuUsPerEvent } },
      ],
      notes: [
        `${total} Customer_update events each way, customer ids cycling over ${SUBJECTS} (${total / SUBJECTS} events per subject, ${SUBJECTS / bench.mainAccounts.length} subjects per endpoint); unordered first, then ordered; jobs taken and put back while an earlier event of their subject was pending: ${holds} (${(holds / total).toFixed(1)} per ordered event); put back because the endpoint was busy: ${busyBack}`,
        `releases when an event ended: ${RELEASE_OUTCOMES.map((outcome, index) => `${outcome} ${released[index] ?? 0}`).join(', ')}`,
      ],
    };
  },
};
