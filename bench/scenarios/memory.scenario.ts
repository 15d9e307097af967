import { metricSample } from '../support/metric-scrape';
import type { SupervisedProcess } from '../support/process-supervisor';
import { RssSampler } from '../support/rss-sampler';
import { endToEnd, settleMs } from './measure';
import { atMost, type Scenario } from './scenario';

const MB = 1024 * 1024;

/** The ingest's V8 heap in use (prom-client's default metric), in MB, or null when /metrics does not answer. */
async function heapUsedMb(url: string): Promise<number | null> {
  const bytes = await metricSample(url, 'nodejs_heap_size_used_bytes');
  return bytes === null ? null : bytes / MB;
}

/**
 * Ingest's RSS and heap in use at regular points of the soak: whether growth levels off (a heap that
 * grows to its working size) or keeps climbing (a leak) shows in the series, not in two samples.
 */
class IngestSeries {
  readonly points: string[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly started = Date.now();

  constructor(process: SupervisedProcess, url: string, everyMs: number) {
    this.timer = setInterval(() => {
      const seconds = Math.round((Date.now() - this.started) / 1000);
      const rss = (process.rss() ?? 0) / MB;
      void heapUsedMb(url).then((heap) => this.points.push(`${seconds}s ${rss.toFixed(0)}/${heap === null ? '?' : heap.toFixed(0)}`));
    }, everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** BENCH_SOAK_MS, the soak's length when set (e.g. a few minutes to see whether RSS levels off without the full 10). */
export function requestedSoakMs(): number | null {
  const asked = Number(process.env.BENCH_SOAK_MS);
  return Number.isFinite(asked) && asked > 0 ? asked : null;
}

function soakLengthMs(quickMs: number, fullMs: number, quick: boolean): number {
  return requestedSoakMs() ?? (quick ? quickMs : fullMs);
}

/**
 * RSS of ingest and worker at full load (the end-to-end load), then during a soak of single POSTs at
 * 500/s: RSS after the warm-up against RSS at the end, growth ≤ 10%.
 */
export const memoryScenario: Scenario = {
  name: 'memory',
  title: 'RSS of ingest and worker at full load and over a soak at 500/s',
  async run(bench) {
    const ingest = bench.ingest.process;
    const worker = bench.worker.process;
    const load = new RssSampler([ingest, worker]);
    try {
      await endToEnd(bench, bench.service(), 'mem', bench.size(2_000, 20_000));
    } finally {
      load.stop();
    }
    const soakMs = soakLengthMs(8_000, 600_000, bench.quick);
    const warmUpMs = soakMs >= 120_000 ? 60_000 : 2_000;
    const soak = new RssSampler([ingest, worker]);
    const series = new IngestSeries(ingest, bench.ingest.url, Math.max(2_000, soakMs / 10));
    let warm = new Map<string, number>();
    const warmTimer = setTimeout(() => {
      warm = soak.sample();
    }, warmUpMs);
    let end: Map<string, number>;
    let sent = '';
    try {
      const result = await bench.load.run({
        targets: [bench.ingest.url],
        path: '/v1/events',
        headers: { authorization: `Bearer ${bench.environment.ingestToken}` },
        body: { kind: 'event', tag: 'soak', accounts: bench.mainAccounts },
        mode: { kind: 'rate', perSecond: 500, durationMs: soakMs },
        connections: 32,
        deadlineMs: soakMs + 60_000,
      });
      end = soak.sample();
      sent = `${result.accepted} of ${result.requests} accepted, answered p50 ${result.latency.p50.toFixed(1)} ms, p99 ${result.latency.p99.toFixed(1)} ms`;
      await bench.receiver.waitFor('soak', result.accepted, settleMs(result.accepted));
      await bench.receiver.forget('soak');
    } finally {
      clearTimeout(warmTimer);
      soak.stop();
      series.stop();
    }
    const growth = (entry: SupervisedProcess): number | null => {
      const before = warm.get(entry.name);
      const after = end.get(entry.name);
      return before && after ? ((after - before) / before) * 100 : null;
    };
    const mb = (value: number | undefined): number | null => (value === undefined ? null : value / MB);
    const ingestGrowth = growth(ingest);
    const workerGrowth = growth(worker);
    return {
      name: this.name,
      title: this.title,
      figures: [
        { label: 'ingest RSS at full load (peak)', value: mb(load.peak.get(ingest.name)), unit: 'MB' },
        { label: 'worker RSS at full load (peak)', value: mb(load.peak.get(worker.name)), unit: 'MB' },
        { label: 'ingest RSS at the end of the soak', value: mb(end.get(ingest.name)), unit: 'MB' },
        { label: 'worker RSS at the end of the soak', value: mb(end.get(worker.name)), unit: 'MB' },
        { label: 'ingest RSS growth over the soak', value: ingestGrowth, unit: '%', target: atMost(ingestGrowth, 10, '≤ 10%') },
        { label: 'worker RSS growth over the soak', value: workerGrowth, unit: '%', target: atMost(workerGrowth, 10, '≤ 10%') },
        { label: 'ingest RSS peak growth, last third of the soak over the first', value: soak.peakGrowth(ingest.name, warmUpMs), unit: '%' },
        { label: 'worker RSS peak growth, last third of the soak over the first', value: soak.peakGrowth(worker.name, warmUpMs), unit: '%' },
      ],
      notes: [
        `soak ${soakMs / 1000} s at 500/s over 20 endpoints (${sent}); growth from ${warmUpMs / 1000} s into the soak to its end`,
        `ingest during the soak, RSS/heap in use (MB): ${series.points.join(', ')}`,
      ],
    };
  },
};
