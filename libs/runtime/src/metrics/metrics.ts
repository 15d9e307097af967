import { collectDefaultMetrics, Counter, Gauge, Histogram, register } from 'prom-client';

let defaultsStarted = false;

/**
 * How often the event loop lag metrics (`nodejs_eventloop_lag_*`) take a sample. Each sample is a timer
 * that wakes the process: prom-client's 10 ms woke an idle ingest 100 times a second and was half or
 * more of its idle CPU, and at a few hundred events a second those wake-ups fall between events. A
 * scrape every 15 s still gets 150 samples.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The gauges prom-client fills from Node's event loop delay histogram. That histogram records the whole
 * time between two of its timer's wake-ups, sampling period included, so an idle loop would read 0.1 s;
 * stddev is left alone, as a constant shift does not change it.
 */
const SHIFTED_LAG_GAUGES = ['min', 'max', 'mean', 'p50', 'p90', 'p99'].map((name) => `nodejs_eventloop_lag_${name}_seconds`);

/** Makes `gauge` store what it is given less `offset`, never below 0, whichever form of `set` prom-client calls. */
function storeLess(gauge: Gauge<string>, offset: number): void {
  const set = gauge.set.bind(gauge) as (labelsOrValue: object | number, value?: number) => void;
  const less = (value: number): number => Math.max(0, value - offset);
  gauge.set = (labelsOrValue: object | number, value?: number) =>
    typeof labelsOrValue === 'number' ? set(less(labelsOrValue)) : set(labelsOrValue, less(value ?? 0));
}

/** Process metrics once per process (tests create several apps in one process). */
export function startDefaultMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  collectDefaultMetrics({ eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  // The delay, as the gauges' names say: what the loop added beyond the sampling period.
  for (const name of SHIFTED_LAG_GAUGES) {
    const gauge = register.getSingleMetric(name) as Gauge<string> | undefined;
    if (gauge) storeLess(gauge, EVENT_LOOP_SAMPLE_MS / 1000);
  }
}

/** Returns the already registered metric of that name, so modules created twice in one process share it. */
export function counter(name: string, help: string, labelNames: string[] = []): Counter<string> {
  return (register.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames });
}

export function histogram(name: string, help: string, labelNames: string[] = [], buckets?: number[]): Histogram<string> {
  return (
    (register.getSingleMetric(name) as Histogram<string> | undefined) ??
    new Histogram({ name, help, labelNames, ...(buckets ? { buckets } : {}) })
  );
}

/** A gauge, optionally read on scrape by `collect` (`this` is the gauge); shared like counter(). */
export function gauge(name: string, help: string, labelNames: string[] = [], collect?: (this: Gauge<string>) => Promise<void> | void): Gauge<string> {
  return (register.getSingleMetric(name) as Gauge<string> | undefined) ?? new Gauge({ name, help, labelNames, ...(collect ? { collect } : {}) });
}
