import { latencyAtRate } from './measure';
import { atMost, type Figure, type Scenario } from './scenario';

export const latencyScenario: Scenario = {
  name: 'latency',
  title: 'single POSTs at a steady 200/s and 500/s over 20 endpoints: POST sent → callback arrives',
  async run(bench) {
    const durationMs = bench.size(2_500, 20_000);
    const figures: Figure[] = [];
    const notes: string[] = [];
    for (const rate of [200, 500]) {
      const service = await latencyAtRate(bench, bench.service(), `l${rate}`, rate, durationMs);
      const baseline = await bench.baseline.once(`latency-${rate}`, async () => latencyAtRate(bench, await bench.baselineTarget(1), `bl${rate}`, rate, durationMs));
      const reference = (value: number) => ({ label: 'baseline ×1', value });
      const targets = rate === 500;
      figures.push(
        { label: `${rate}/s p50`, value: service.endToEndMs.p50, unit: 'ms', reference: reference(baseline.endToEndMs.p50), target: targets ? atMost(service.endToEndMs.p50, 10, 'p50 ≤ 10 ms') : undefined },
        { label: `${rate}/s p95`, value: service.endToEndMs.p95, unit: 'ms', reference: reference(baseline.endToEndMs.p95) },
        { label: `${rate}/s p99`, value: service.endToEndMs.p99, unit: 'ms', reference: reference(baseline.endToEndMs.p99), target: targets ? atMost(service.endToEndMs.p99, 50, 'p99 ≤ 50 ms') : undefined },
      );
      notes.push(
        `${rate}/s: ${service.matched} events matched send → arrival, ${Math.round(service.achievedPerSecond)}/s sent; POST answered p50 ${service.requestLatency.p50.toFixed(1)} ms, p99 ${service.requestLatency.p99.toFixed(1)} ms`,
      );
    }
    return { name: this.name, title: this.title, figures, notes };
  },
};
