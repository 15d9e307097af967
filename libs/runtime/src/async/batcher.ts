/** What the batch function says about one item: its value, or why that item (alone) failed. */
export type Settled<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface BatcherOptions<I, O> {
  /** Items per call of the batch function. */
  maxBatch: number;
  /** Batch calls running at once; further items wait and join the next batch (group commit). */
  maxInFlight: number;
  /**
   * How long the first waiting item holds the door open for others. 0 (what every caller uses) waits
   * for no timer: the batch goes out right after the I/O callbacks of the current loop turn
   * (setImmediate; a 0 ms setTimeout is 1 ms), so a lone item waits for nobody while items arriving
   * together still share a batch, and under load batches grow while earlier ones run.
   */
  lingerMs: number;
  /**
   * Work for a whole batch after its call (ingest: one queue add for the stored events). It runs
   * beside the next batch's call, not in its slot, and callers are answered once it is over; it
   * must not throw.
   */
  afterBatch?: (items: readonly I[], results: readonly Settled<O>[]) => Promise<void>;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

type BatchOutcome<O> = { results: Settled<O>[] } | { error: unknown };

/**
 * Group commit: turns many concurrent single-item calls into few multi-item calls (statements). Under
 * light load an item goes out almost at once; under heavy load items pile up while earlier batches
 * run, so batches grow by themselves and the number of round trips stays bounded by `maxInFlight`.
 * Every caller's promise settles only after the batch holding its item has finished. Used by ingest
 * (storing events) and the worker (loading events and settings, recording outcomes).
 */
export class Batcher<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly answering = new Set<Promise<void>>();
  private timer: { kind: 'timeout'; handle: NodeJS.Timeout } | { kind: 'immediate'; handle: NodeJS.Immediate } | null = null;

  constructor(
    private readonly run: (items: I[]) => Promise<Settled<O>[]>,
    private readonly options: BatcherOptions<I, O>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Sends everything still waiting and resolves once no batch is running or being answered. */
  async drain(): Promise<void> {
    while (this.waiting.length > 0 || this.running.size > 0 || this.answering.size > 0) {
      this.clearTimer();
      while (this.waiting.length > 0 && this.running.size < this.options.maxInFlight) this.launch();
      await Promise.race([...this.running, ...this.answering]);
    }
  }

  get pending(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.running.size >= this.options.maxInFlight) return; // the next finishing batch picks these up
    if (this.waiting.length >= this.options.maxBatch) {
      this.clearTimer();
      this.launch();
      return;
    }
    if (this.timer) return;
    const fire = (): void => {
      this.timer = null;
      if (this.waiting.length > 0 && this.running.size < this.options.maxInFlight) this.launch();
    };
    this.timer =
      this.options.lingerMs > 0
        ? { kind: 'timeout', handle: setTimeout(fire, this.options.lingerMs) }
        : { kind: 'immediate', handle: setImmediate(fire) };
  }

  private clearTimer(): void {
    if (this.timer?.kind === 'timeout') clearTimeout(this.timer.handle);
    else if (this.timer?.kind === 'immediate') clearImmediate(this.timer.handle);
    this.timer = null;
  }

  private launch(): void {
    const batch = this.waiting.splice(0, this.options.maxBatch);
    const called = this.call(batch);
    const slot = called.then(() => {
      this.running.delete(slot);
      // Whatever piled up meanwhile has waited long enough: send it now rather than linger again.
      if (this.waiting.length > 0) {
        this.clearTimer();
        this.launch();
      }
    });
    this.running.add(slot);
    const answered = called.then((outcome) => this.answer(batch, outcome)).finally(() => this.answering.delete(answered));
    this.answering.add(answered);
  }

  private async call(batch: Waiting<I, O>[]): Promise<BatchOutcome<O>> {
    try {
      return { results: await this.run(batch.map((waiting) => waiting.item)) };
    } catch (error) {
      return { error };
    }
  }

  private async answer(batch: Waiting<I, O>[], outcome: BatchOutcome<O>): Promise<void> {
    if ('error' in outcome) {
      for (const waiting of batch) waiting.reject(outcome.error);
      return;
    }
    const { results } = outcome;
    if (this.options.afterBatch) await this.options.afterBatch(batch.map((waiting) => waiting.item), results).catch(() => undefined);
    batch.forEach((waiting, index) => {
      const result = results[index];
      if (!result) waiting.reject(new Error('batch returned no result for this item'));
      else if (result.ok) waiting.resolve(result.value);
      else waiting.reject(result.error);
    });
  }
}

export interface OneByOneFallback {
  /** Whether a failed batch is worth splitting (not when the database is away: each would fail alike). */
  splitOn?: (error: unknown) => boolean;
  /** Told before the split, to say so in the log. */
  onSplit?: (error: unknown, size: number) => void;
}

/**
 * A batch function from one that stores all items in one statement or fails as a whole. When the
 * statement fails, one item may be what failed (a row the database refuses, an account removed
 * meanwhile): the items are then tried one by one, so only the culprit sees the error.
 */
export function oneByOneOnFailure<I, O>(runAll: (items: I[]) => Promise<O[]>, fallback: OneByOneFallback = {}): (items: I[]) => Promise<Settled<O>[]> {
  return async (items) => {
    try {
      const values = await runAll(items);
      return values.map((value) => ({ ok: true, value }));
    } catch (error) {
      if (items.length === 1 || (fallback.splitOn && !fallback.splitOn(error))) throw error;
      fallback.onSplit?.(error, items.length);
      const results: Settled<O>[] = [];
      for (const item of items) {
        try {
          const [value] = await runAll([item]);
          results.push({ ok: true, value });
        } catch (single) {
          results.push({ ok: false, error: single });
        }
      }
      return results;
    }
  };
}
