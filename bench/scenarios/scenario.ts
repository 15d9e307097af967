import type { BenchContext } from '../support/bench-context';
import type { CostPerEvent } from '../support/cost-per-event';

export type Unit = 'events/s' | 'calls/s' | 'ms' | 'µs' | 'MB' | '%' | 'ratio' | 'commands' | 'bytes';

/** One number a scenario reports, with what it is compared against and the target for it. */
export interface Figure {
  label: string;
  value: number | null;
  unit: Unit;
  /** The same figure for the framework-free pipeline (or another reference) measured in this run. */
  reference?: { label: string; value: number | null };
  target?: { text: string; holds: boolean | null };
}

export interface ScenarioResult {
  name: string;
  title: string;
  figures: Figure[];
  notes: string[];
  /** What one event cost each process, and PostgreSQL, in the scenario's phases (service and baseline). */
  costs?: Array<{ label: string; cost: CostPerEvent }>;
}

export interface Scenario {
  name: string;
  title: string;
  run(bench: BenchContext): Promise<ScenarioResult>;
}

/** Held when `value` is at least `limit`, the pass line being the target itself; not measured when there is no value. */
export const atLeast = (value: number | null, limit: number, text: string): Figure['target'] => ({ text, holds: value === null || !Number.isFinite(value) ? null : value >= limit });
/** Held when `value` is at most `limit`; not measured when there is no value. */
export const atMost = (value: number | null, limit: number, text: string): Figure['target'] => ({ text, holds: value === null || !Number.isFinite(value) ? null : value <= limit });
