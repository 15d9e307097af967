import { loggableErrorText, within } from '@app/runtime';
import { SHUTDOWN_BOUNDS_MS } from './leased-task-runner';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { Sql } from '@app/persistence';
import { redactJsonText, redactRequestBody } from './redact';
import {
  ACCOUNTS_WITH_REDACTION,
  LOCK_REDACTION,
  MOVE_REDACTION_MARK,
  REDACT_MESSAGES,
  REDACT_REQUEST_BODIES,
  type ScannedEvent,
  SCAN_EVENTS,
  STORED_REQUEST_BODIES,
} from './redaction.statements';

/** How often every delivery worker looks for ended events to redact. */
export const REDACTION_PASS_MS = 2_000;
/** Events read per transaction. */
const REDACTION_CHUNK = 500;

/**
 * Redaction at rest (CONTRACT §12) runs here, in the delivery worker's background, not on the delivery
 * path: config-api only stores the fields (and announces a `redaction` task, which wakes a pass at
 * once); every REDACTION_PASS_MS each worker walks, per account with redaction fields, its events in
 * seq order from `redacted_through_seq`, rewriting the message of every event whose deliveries have
 * all ended (every destination's, not only the primary's) and the request bodies its attempts stored
 * (attempts without one rebuild it from the message, so they follow). The mark only moves past events
 * that have ended and were written, so one still pending is looked at again on later passes until it
 * ends; this process remembers how far it scanned beyond the mark, so a long-pending event does not
 * make it read the same rows over and over.
 */
@Injectable()
export class RedactionPass implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RedactionPass.name);
  private readonly scannedTo = new Map<number, string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(private readonly sql: Sql) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.wake(), REDACTION_PASS_MS);
    this.timer.unref();
  }

  /** Bounded like the task runners': a pass waiting for an unreachable PostgreSQL is left (its transaction never commits). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    if (this.running) await within(this.running, SHUTDOWN_BOUNDS_MS.steps, 'the redaction pass').catch(() => undefined);
  }

  /** Starts a pass now unless one is running. */
  wake(): void {
    if (this.running || this.stopping) return;
    this.running = this.pass()
      .catch((error: unknown) => this.logger.warn(`redaction pass failed: ${loggableErrorText(error)}`))
      .finally(() => (this.running = null));
  }

  private async pass(): Promise<void> {
    const accounts = await this.sql.rows(ACCOUNTS_WITH_REDACTION, {});
    for (const { account_id: accountId } of accounts) {
      while (!this.stopping && (await this.sql.transaction((runner) => this.chunk(runner, accountId))));
    }
  }

  /** One chunk of one account's events; true while more are left to scan in this pass. */
  private async chunk(runner: QueryRunner, accountId: number): Promise<boolean> {
    const settings = await this.sql.first(LOCK_REDACTION, { accountId }, runner);
    if (!settings || settings.fields.length === 0) return false;
    const fields = new Set(settings.fields);
    const mark = settings.through ?? '-1';
    const remembered = this.scannedTo.get(accountId);
    const from = remembered !== undefined && BigInt(remembered) > BigInt(mark) ? remembered : mark;
    const events = await this.sql.rows(SCAN_EVENTS, { accountId, after: from, limit: REDACTION_CHUNK }, runner);
    const missed = await this.redactEvents(runner, events.filter((event) => event.ended), fields);

    // A redaction that could not be written (the event restarted meanwhile) holds the mark like a pending event.
    const firstPending = events.findIndex((event) => !event.ended || missed.has(event.seq));
    // The mark moves only while everything up to it has ended; past the first pending event, only this process's scan position does.
    if (from === mark && firstPending !== 0 && events.length > 0) {
      const through = firstPending < 0 ? events[events.length - 1].seq : events[firstPending - 1].seq;
      await this.sql.rows(MOVE_REDACTION_MARK, { accountId, through }, runner);
    }
    if (events.length < REDACTION_CHUNK) {
      this.scannedTo.delete(accountId);
      return false;
    }
    this.scannedTo.set(accountId, events[events.length - 1].seq);
    return true;
  }

  /** Redacts the ended events' messages and their attempts' stored request bodies; answers the events whose message could not be written. */
  private async redactEvents(runner: QueryRunner, ended: ScannedEvent[], fields: ReadonlySet<string>): Promise<Set<string>> {
    const changed = ended.flatMap((event) => {
      const message = redactJsonText(event.message, fields);
      return message === null ? [] : [{ seq: event.seq, read: event.message, message }];
    });
    if (changed.length === 0) return new Set();
    const written = await this.sql.rows(
      REDACT_MESSAGES,
      { seqs: changed.map((event) => event.seq), read: changed.map((event) => event.read), redacted: changed.map((event) => event.message) },
      runner,
    );
    const seqs = written.map((row) => row.seq);
    const missed = new Set(changed.map((event) => event.seq));
    for (const seq of seqs) missed.delete(seq);
    if (seqs.length === 0) return missed;
    const attempts = await this.sql.rows(STORED_REQUEST_BODIES, { seqs }, runner);
    const bodies = attempts.flatMap((attempt) => {
      const body = redactRequestBody(attempt.request_body, fields);
      return body === null ? [] : [{ ...attempt, body }];
    });
    if (bodies.length > 0) {
      await this.sql.rows(
        REDACT_REQUEST_BODIES,
        {
          seqs: bodies.map((row) => row.event_seq),
          ids: bodies.map((row) => row.id),
          read: bodies.map((row) => row.request_body),
          redacted: bodies.map((row) => row.body),
        },
        runner,
      );
    }
    return missed;
  }
}
