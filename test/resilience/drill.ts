import type { DrillStack, StackOptions } from './drill-stack';
import type { Tally } from './event-audit';
import type { PostgresInstance } from './postgres-instance';

/** What a drill gets from the runner. */
export interface DrillContext {
  readonly quick: boolean;
  /** The run's own PostgreSQL instance (running when a drill starts; a drill that stops it restarts it). */
  readonly postgres: PostgresInstance;
  /** A fresh stack for this drill; the runner closes it afterwards, whatever happened. */
  openStack(name: string, options: StackOptions): Promise<DrillStack>;
  /** Records a broken guarantee or bound: the drill fails (and goes on, to report everything it sees). */
  problem(text: string): void;
  /** Records a figure or observation printed under the drill. */
  note(text: string): void;
  /** The drill's accepted/delivered/lost/duplicated figures. */
  report(tally: Tally): void;
}

export interface Drill {
  id: number;
  title: string;
  /** A drill still running after this long fails, and its processes are killed. */
  deadlineMs(quick: boolean): number;
  /**
   * Its bound depends on how fast the machine answers (drill 8's duplicates grow with the call-to-commit lag),
   * so with --lanes it runs alone, after every other drill.
   */
  alone?: boolean;
  run(context: DrillContext): Promise<void>;
}

export interface DrillResult {
  id: number;
  title: string;
  durationMs: number;
  tally?: Tally;
  problems: string[];
  notes: string[];
}

export function passed(result: DrillResult): boolean {
  return result.problems.length === 0 && (result.tally?.lost ?? 0) === 0;
}
