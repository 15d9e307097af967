import type { SupervisedProcess } from './process-supervisor';

/** Highest RSS seen per process while sampling runs. */
export class RssSampler {
  readonly peak = new Map<string, number>();
  /** Every sample, by process: [ms since the sampler started, RSS]. */
  readonly samples = new Map<string, [number, number][]>();
  private readonly timer: NodeJS.Timeout;
  private readonly started = Date.now();

  constructor(private readonly processes: SupervisedProcess[]) {
    this.timer = setInterval(() => this.sample(), 250);
  }

  sample(): Map<string, number> {
    const now = new Map<string, number>();
    for (const entry of this.processes) {
      const rss = entry.rss() ?? 0;
      now.set(entry.name, rss);
      this.peak.set(entry.name, Math.max(this.peak.get(entry.name) ?? 0, rss));
      const samples = this.samples.get(entry.name) ?? [];
      samples.push([Date.now() - this.started, rss]);
      this.samples.set(entry.name, samples);
    }
    return now;
  }

  /**
   * Growth of the highest RSS in the last third of [fromMs, end] over the highest in its first third, in %.
   * The heap grows and is collected in a sawtooth; two single samples land anywhere on it, peaks do not.
   */
  peakGrowth(name: string, fromMs: number): number | null {
    const samples = (this.samples.get(name) ?? []).filter(([at]) => at >= fromMs);
    if (samples.length < 3) return null;
    const third = (samples[samples.length - 1][0] - fromMs) / 3;
    const peakOf = (from: number, to: number) => Math.max(0, ...samples.filter(([at]) => at >= from && at <= to).map(([, rss]) => rss));
    const first = peakOf(fromMs, fromMs + third);
    const last = peakOf(fromMs + 2 * third, Number.POSITIVE_INFINITY);
    return first > 0 ? ((last - first) / first) * 100 : null;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** First, highest and last RSS sampled of `name`, in bytes (null before a sample). */
  startPeakEnd(name: string): { start: number; peak: number; end: number } | null {
    const samples = this.samples.get(name) ?? [];
    const first = samples[0];
    const last = samples.at(-1);
    if (!first || !last) return null;
    return { start: first[1], peak: this.peak.get(name) ?? 0, end: last[1] };
  }
}
