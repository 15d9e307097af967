import { createHistogram } from 'node:perf_hooks';
import type { LatencySummary, LoadMode, LoadResult } from '../load/load-plan';
import type { BenchContext, ServiceTarget } from '../support/bench-context';
import { startCost } from '../support/cost-per-event';
import type { Arrival } from './stage-timings';

/** Generous, but bounded: the time `count` callbacks may take to arrive at a slow 100/s, plus a minute. */
export const settleMs = (count: number): number => 60_000 + count * 10;

function checkLoad(result: LoadResult, what: string): void {
  if (result.accepted === 0) throw new Error(`${what}: nothing was accepted (${result.firstError ?? 'no answer'}; statuses ${JSON.stringify(result.statuses)})`);
}

/** Starts counting the CPU time of the target's processes; the function answers the ms used since. */
export function cpuMeter(target: Pick<ServiceTarget, 'processes'>): () => number {
  const total = (): number => target.processes.reduce((sum, entry) => sum + (entry.cpuMs() ?? 0), 0);
  const before = total();
  return () => total() - before;
}

/** Single events to `target`, each id `<tag>-<n>`, sent as `mode` says. */
function singleEvents(bench: BenchContext, target: ServiceTarget, tag: string, mode: LoadMode, connections: number, recordSends = false) {
  const durationMs = mode.kind === 'rate' ? mode.durationMs : (mode.durationMs ?? 0);
  return bench.load.run({
    targets: target.urls,
    path: target.eventPath,
    headers: target.headers,
    body: { kind: 'event', tag, accounts: target.accounts },
    mode,
    connections,
    recordSends,
    deadlineMs: durationMs + 60_000,
  });
}

/** Single events, `inFlight` keep-alive connections, for `durationMs`; waits until every accepted event was delivered. */
export async function singlePosts(bench: BenchContext, target: ServiceTarget, tag: string, inFlight: number, durationMs: number) {
  const meter = await startCost(bench.environment, target.processes);
  const cpu = cpuMeter(target);
  // The first process alone (the service's ingest; the baseline's only one) while the requests run.
  const firstCpu = cpuMeter({ processes: target.processes.slice(0, 1) });
  const result = await singleEvents(bench, target, tag, { kind: 'concurrency', inFlight, durationMs }, inFlight);
  const firstCpuUsPerEvent = (firstCpu() * 1000) / Math.max(1, result.accepted);
  checkLoad(result, `${target.label} single POSTs`);
  await bench.receiver.waitFor(tag, result.accepted, settleMs(result.accepted));
  const cpuUsPerEvent = (cpu() * 1000) / result.accepted;
  const cost = await meter.stop(result.accepted);
  await bench.receiver.forget(tag);
  return { acceptedPerSecond: result.accepted / (result.elapsedMs / 1000), latency: result.latency, cpuUsPerEvent, firstCpuUsPerEvent, cost, result };
}

/**
 * `total` events in batches of `size`, `inFlight` requests at a time; accepted events per second.
 * With `subjects`, the events are about that many customers in turn (bodyBuilder).
 */
export async function batches(bench: BenchContext, target: ServiceTarget, tag: string, total: number, size = 500, inFlight = 4, subjects?: number) {
  const cpus = target.processes.map((entry) => cpuMeter({ processes: [entry] }));
  const result = await bench.load.run({
    targets: target.urls,
    path: target.batchPath,
    headers: target.headers,
    body: { kind: 'batch', tag, accounts: target.accounts, size, subjects },
    mode: { kind: 'concurrency', inFlight, total: Math.ceil(total / size) },
    connections: inFlight,
    deadlineMs: 300_000,
  });
  checkLoad(result, `${target.label} batches`);
  // Per process while the batches were sent (the service: ingest, then worker): who had the CPU.
  const cpuUsPerEventByProcess = cpus.map((cpu) => (cpu() * 1000) / Math.max(1, result.accepted));
  if (result.accepted < total) throw new Error(`${target.label}: only ${result.accepted} of ${total} events accepted (${JSON.stringify(result.statuses)})`);
  return { acceptedPerSecond: result.accepted / (result.elapsedMs / 1000), cpuUsPerEventByProcess, result };
}

/**
 * Ingest → delivered: from the first batch sent until the last of `expected` callbacks (by default
 * all `total`) arrived. With `subjects`, the events are about that many customers in turn.
 */
export async function endToEnd(bench: BenchContext, target: ServiceTarget, tag: string, total: number, expected = total, subjects?: number) {
  const meter = await startCost(bench.environment, target.processes);
  const cpu = cpuMeter(target);
  const ingest = await batches(bench, target, tag, total, undefined, undefined, subjects);
  const stats = await bench.receiver.waitFor(tag, expected, settleMs(total));
  const cpuUsPerEvent = (cpu() * 1000) / expected;
  const cost = await meter.stop(expected);
  await bench.receiver.forget(tag);
  const seconds = ((stats.last ?? 0) - ingest.result.startedAt) / 1000;
  return { deliveredPerSecond: expected / seconds, cpuUsPerEvent, cost, acceptedPerSecond: ingest.acceptedPerSecond, duplicates: stats.duplicates, byHost: stats.byHost };
}

/**
 * Single events at a steady `perSecond`; POST sent → callback arrived, per event, in ms. Keep-alive
 * connections grow with the rate (32 up to 320/s): a POST answered in 30 ms at 2,000/s needs 60 at once,
 * and a request waiting for a connection would count against the service.
 */
export async function latencyAtRate(bench: BenchContext, target: ServiceTarget, tag: string, perSecond: number, durationMs: number) {
  const meter = await startCost(bench.environment, target.processes);
  const result = await singleEvents(bench, target, tag, { kind: 'rate', perSecond, durationMs }, Math.max(32, Math.ceil(perSecond / 10)), true);
  checkLoad(result, `${target.label} at ${perSecond}/s`);
  await bench.receiver.waitFor(tag, result.accepted, settleMs(result.accepted));
  const cost = await meter.stop(result.accepted);
  const arrivals = await bench.receiver.arrivals(tag);
  await bench.receiver.forget(tag);
  const sends = result.sends ?? { ids: [], at: [] };
  // Microsecond buckets: the same histogram the load generator keeps for request latency.
  const delays = createHistogram();
  let matched = 0;
  const samples: Arrival[] = [];
  sends.ids.forEach((id, index) => {
    const arrived = arrivals.get(id);
    if (arrived === undefined) return;
    matched += 1;
    const sentAt = sends.at[index] ?? arrived;
    samples.push({ id, sentAt, arrivedAt: arrived });
    delays.record(Math.max(1, Math.round((arrived - sentAt) * 1000)));
  });
  const ms = (value: number): number => (matched ? value / 1000 : 0);
  const endToEndMs: LatencySummary = {
    p50: ms(delays.percentile(50)),
    p95: ms(delays.percentile(95)),
    p99: ms(delays.percentile(99)),
    max: ms(delays.max),
    mean: ms(delays.mean),
  };
  const achievedPerSecond = result.requests / (result.elapsedMs / 1000);
  return { endToEndMs, requestLatency: result.latency, matched, achievedPerSecond, cost, result, samples };
}
