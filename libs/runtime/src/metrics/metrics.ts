import { collectDefaultMetrics, Counter, Gauge, Histogram, register } from 'prom-client';

let defaultsStarted = false;

/**
 * How often the event loop lag metrics (`nodejs_eventloop_lag_*`) take a sample. Each sample is a timer
 * that wakes the process: prom-client's 10 ms woke an idle ingest 100 times a second and was half or
 * more of its idle CPU, and at a few hundred events a second those wake-ups fall between events. A
 * scrape every 15 s still gets 150 samples.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** Process metrics once per process (tests create several apps in one process). */
export function startDefaultMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  collectDefaultMetrics({ eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
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
