import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { books, Sql } from '@app/persistence';
import { RepeatingRun } from '@app/runtime';

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
  private readonly loop = new RepeatingRun(() => this.foldOnce(), { intervalMs: FOLD_INTERVAL_MS, what: 'folding the books', logger: this.logger });

  constructor(private readonly sql: Sql) {}

  onApplicationBootstrap(): void {
    this.loop.start(FOLD_INTERVAL_MS);
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.loop.stop();
  }

  /** Folds what is there now; answers how many entries it folded. */
  async foldOnce(): Promise<number> {
    const row = await this.sql.first(books.FOLD_BOOKS, {});
    return row?.folded ?? 0;
  }
}
