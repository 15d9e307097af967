import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { books, Sql } from '@app/persistence';
import { loggableErrorText } from '@app/runtime';

/** How often each worker folds the book entries: readers add the unfolded ones, so this only bounds the table's size. */
export const FOLD_INTERVAL_MS = 2_000;

/**
 * Folds the book entries that ingest's, the recorder's and the other writers' statements appended into
 * the event tallies and the delivery rollups (books.FOLD_BOOKS, docs/delivery-model.md). Several workers may
 * fold at once: each statement takes the entries it deletes, and upserts in key order, so they neither
 * count an entry twice nor deadlock.
 */
@Injectable()
export class BooksFolder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(BooksFolder.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly sql: Sql) {}

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Folds what is there now; answers how many entries it folded. */
  async foldOnce(): Promise<number> {
    const row = await this.sql.first(books.FOLD_BOOKS, {});
    return row?.folded ?? 0;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.foldOnce()
        .then(
          () => undefined,
          (error: unknown) => this.logger.warn(`folding the books failed: ${loggableErrorText(error)}`),
        )
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, FOLD_INTERVAL_MS);
  }
}
