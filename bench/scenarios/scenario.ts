import type { BenchContext } from '../support/bench-context';

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
}

export interface Scenario {
  name: string;
  title: string;
  run(bench: BenchContext): Promise<ScenarioResult>;
}

export const atLeast = (value: number | null, limit: number, text: string): Figure['target'] => ({ text, holds: value === null ? null : value >= limit });
export const atMost = (value: number | null, limit: number, text: string): Figure['target'] => ({ text, holds: value === null ? null : value <= limit });
