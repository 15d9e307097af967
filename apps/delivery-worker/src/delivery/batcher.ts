/** What the batch function says about one item: its value, or why that item (alone) failed. */
export type Settled<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface BatcherOptions {
  /** Items per call of the batch function. */
  maxBatch: number;
  /** Batch calls running at once; further items wait and join the next batch (group commit). */
  maxInFlight: number;
  /** How long the first waiting item holds the door open for others; 0 means the next turn of the event loop. */
  lingerMs: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Turns many concurrent single-item calls into few multi-item calls. Under light load an item goes out
 * almost at once; under heavy load items pile up while earlier batches run, so batches grow by
 * themselves and the number of round trips stays bounded by `maxInFlight`. Every caller's promise
 * settles only after the batch holding its item has finished.
 */
export class Batcher<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly run: (items: I[]) => Promise<Settled<O>[]>,
    private readonly options: BatcherOptions,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Sends everything still waiting and resolves once no batch is running. */
  async drain(): Promise<void> {
    while (this.waiting.length > 0 || this.running.size > 0) {
      this.clearTimer();
      while (this.waiting.length > 0 && this.running.size < this.options.maxInFlight) this.launch();
      await Promise.race(this.running);
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
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.waiting.length > 0 && this.running.size < this.options.maxInFlight) this.launch();
    }, this.options.lingerMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private launch(): void {
    const batch = this.waiting.splice(0, this.options.maxBatch);
    const done = this.execute(batch).finally(() => {
      this.running.delete(done);
      // Whatever piled up meanwhile has waited long enough: send it now rather than linger again.
      if (this.waiting.length > 0) {
        this.clearTimer();
        this.launch();
      }
    });
    this.running.add(done);
  }

  private async execute(batch: Waiting<I, O>[]): Promise<void> {
    let results: Settled<O>[];
    try {
      results = await this.run(batch.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, index) => {
      const result = results[index];
      if (!result) waiting.reject(new Error('batch returned no result for this item'));
      else if (result.ok) waiting.resolve(result.value);
      else waiting.reject(result.error);
    });
  }
}
