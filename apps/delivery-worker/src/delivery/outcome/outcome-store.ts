import { Injectable, Logger } from '@nestjs/common';
import { deliverySteps, Sql } from '@app/persistence';
import { Batcher, loggableErrorText, oneByOneOnFailure } from '@app/runtime';

function stepKey(outcome: Pick<deliverySteps.StepOutcome, 'seq' | 'destinationId' | 'series' | 'seriesAttempts'>): string {
  return `${outcome.seq}/${outcome.destinationId}/${outcome.series}/${outcome.seriesAttempts}`;
}

/**
 * Writes the first outcome of each step (two in one batch are duplicate jobs: only the first may change
 * the delivery and add its attempt) and answers, per outcome, whether it was the one whose change applied.
 * `write` answers the keys of the steps whose change applied.
 */
export async function recordFirstOfEachStep<T>(outcomes: readonly T[], keyOf: (outcome: T) => string, write: (firsts: T[]) => Promise<Set<string>>): Promise<boolean[]> {
  const seen = new Set<string>();
  const firsts = outcomes.filter((outcome) => {
    const key = keyOf(outcome);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const applied = await write(firsts);
  const claimed = new Set<string>();
  return outcomes.map((outcome) => {
    const key = keyOf(outcome);
    if (!applied.has(key) || claimed.has(key)) return false;
    claimed.add(key);
    return true;
  });
}

/**
 * The worker's record of its outcomes, every destination's alike: written in batches shared by all
 * concurrent jobs (deliverySteps.RECORD_OUTCOMES, one statement a batch), so a busy worker makes a few round trips
 * per batch instead of one per delivery. One statement at a time: outcomes arriving meanwhile form the
 * next, larger batch, so batches grow with the load. No statement waits for company: until its outcome
 * commits, a worker killed repeats the call, so a wait to share statements buys PostgreSQL time with
 * duplicates (docs/delivery-model.md).
 */
@Injectable()
export class OutcomeStore {
  private readonly logger = new Logger(OutcomeStore.name);
  private readonly writer: Batcher<deliverySteps.StepOutcome, boolean>;

  constructor(private readonly sql: Sql) {
    const writeMany = oneByOneOnFailure((outcomes: deliverySteps.StepOutcome[]) => this.execute(outcomes), {
      onSplit: (error, size) => this.logger.warn(`writing ${size} delivery outcomes at once failed (${loggableErrorText(error)}); writing them one by one`),
    });
    this.writer = new Batcher(writeMany, { maxBatch: 200, maxInFlight: 1, lingerMs: 0 });
  }

  /** Resolves once the outcome is committed: true when it applied, false when the delivery had moved on. */
  record(outcome: deliverySteps.StepOutcome): Promise<boolean> {
    return this.writer.submit(outcome);
  }

  /** Waits for every outcome handed in so far to be written (shutdown). */
  async drain(): Promise<void> {
    await this.writer.drain();
  }

  private execute(outcomes: deliverySteps.StepOutcome[]): Promise<boolean[]> {
    return recordFirstOfEachStep(outcomes, stepKey, async (firsts) => {
      const rows = await this.sql.rows(deliverySteps.RECORD_OUTCOMES, deliverySteps.recordOutcomesParams(firsts));
      return new Set(rows.map((row) => stepKey({ seq: row.seq, destinationId: row.destination_id, series: row.series, seriesAttempts: row.series_attempts })));
    });
  }
}
