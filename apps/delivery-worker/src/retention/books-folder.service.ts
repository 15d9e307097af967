import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { books, Sql } from '@app/persistence';
import { RepeatingRun } from '@app/runtime';

/**
 * How often each worker folds the books: readers add the unfolded entries and the uncounted events, so
 * this only bounds the entries table and how many events a reader counts from their rows.
 */
export const FOLD_INTERVAL_MS = 2_000;

/**
 * Counts the events accepted since the last pass into the event tallies (books.countAcceptedEvents), then
 * folds the book entries that the recorder's and the other writers' statements appended into the event
 * tallies and the delivery rollups (books.FOLD_BOOKS, docs/delivery-model.md). Several workers may fold
 * at once: the count takes the mark's lock, and each fold statement takes the entries it deletes and
 * upserts in key order, so they neither count anything twice nor deadlock.
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

  /** Counts and folds what is there now; answers how many events and entries it took. */
  async foldOnce(): Promise<number> {
    const { counted } = await this.sql.transaction((runner) => books.countAcceptedEvents(runner));
    const row = await this.sql.first(books.FOLD_BOOKS, {});
    return counted + (row?.folded ?? 0);
  }
}
