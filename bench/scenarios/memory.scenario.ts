import type { SupervisedProcess } from '../support/process-supervisor';
import { endToEnd, settleMs } from './measure';
import { atMost, type Scenario } from './scenario';

const MB = 1024 * 1024;

/** Highest RSS seen per process while sampling runs. */
class RssSampler {
  readonly peak = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly processes: SupervisedProcess[]) {
    this.timer = setInterval(() => this.sample(), 250);
  }

  sample(): Map<string, number> {
    const now = new Map<string, number>();
    for (const entry of this.processes) {
      const rss = entry.rss() ?? 0;
      now.set(entry.name, rss);
      this.peak.set(entry.name, Math.max(this.peak.get(entry.name) ?? 0, rss));
    }
    return now;
  }

  stop(): void {
    clearInterval(this.timer);
  }
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
    const soakMs = bench.size(8_000, 600_000);
    const warmUpMs = bench.size(2_000, 60_000);
    const soak = new RssSampler([ingest, worker]);
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
      ],
      notes: [`soak ${soakMs / 1000} s at 500/s over 20 endpoints (${sent}); growth from ${warmUpMs / 1000} s into the soak to its end`],
    };
  },
};
