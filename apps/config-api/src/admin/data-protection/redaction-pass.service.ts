import { loggableErrorText } from '@app/runtime';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { FINAL_STATUS_LIST } from '@app/persistence';
import { redactJsonText, redactRequestBody } from './redact';

/** How often every config-api process looks for ended events to redact. */
export const REDACTION_PASS_MS = 2_000;
/** Events read per transaction. */
const REDACTION_CHUNK = 500;
/** Transaction-scoped advisory locks (this key, the account id): one process works on an account at a time. */
const REDACTION_LOCK_KEY = 7_263_511;

interface ScannedEvent {
  seq: string;
  message: string;
  ended: boolean;
}

/**
 * Redaction at rest (CONTRACT §12) runs here, in the background, not on the delivery path: every
 * REDACTION_PASS_MS each config-api process walks, per account with redaction fields, its events in
 * seq order from `redacted_through_seq`, rewriting the message and the attempts' request bodies of
 * every event that has ended. The mark only moves past events that have ended, so one still pending
 * is looked at again on later passes until it ends; this process remembers how far it scanned beyond
 * the mark, so a long-pending event does not make it read the same rows over and over.
 */
@Injectable()
export class RedactionPass implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RedactionPass.name);
  private readonly scannedTo = new Map<number, string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.wake(), REDACTION_PASS_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Starts a pass now unless one is running. */
  wake(): void {
    if (this.running || this.stopping) return;
    this.running = this.pass()
      .catch((error: unknown) => this.logger.warn(`redaction pass failed: ${loggableErrorText(error)}`))
      .finally(() => (this.running = null));
  }

  private async pass(): Promise<void> {
    const accounts = await this.dataSource.query<{ account_id: number }[]>(`SELECT account_id FROM callback_settings WHERE cardinality(redaction_fields) > 0`);
    for (const { account_id: accountId } of accounts) {
      while (!this.stopping && (await this.dataSource.transaction((manager) => this.chunk(manager, accountId))));
    }
  }

  /** One chunk of one account's events; true while more are left to scan in this pass. */
  private async chunk(manager: EntityManager, accountId: number): Promise<boolean> {
    const [lock] = await manager.query<{ locked: boolean }[]>(`SELECT pg_try_advisory_xact_lock($1, $2) AS locked`, [REDACTION_LOCK_KEY, accountId]);
    if (!lock.locked) return false;
    const [settings] = await manager.query<{ fields: string[]; through: string | null }[]>(
      `SELECT redaction_fields AS fields, redacted_through_seq::text AS through FROM callback_settings WHERE account_id = $1`,
      [accountId],
    );
    if (!settings || settings.fields.length === 0) return false;
    const fields = new Set(settings.fields);
    const mark = settings.through ?? '-1';
    const remembered = this.scannedTo.get(accountId);
    const from = remembered !== undefined && BigInt(remembered) > BigInt(mark) ? remembered : mark;
    const events = await manager.query<ScannedEvent[]>(
      `SELECT seq::text AS seq, message::text AS message, status IN ${FINAL_STATUS_LIST} AS ended
         FROM events WHERE account_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT ${REDACTION_CHUNK}`,
      [accountId, from],
    );
    await this.redactEvents(manager, events.filter((event) => event.ended), fields);

    const firstPending = events.findIndex((event) => !event.ended);
    // The mark moves only while everything up to it has ended; past the first pending event, only this process's scan position does.
    if (from === mark && firstPending !== 0 && events.length > 0) {
      const through = firstPending < 0 ? events[events.length - 1].seq : events[firstPending - 1].seq;
      await manager.query(`UPDATE callback_settings SET redacted_through_seq = $2 WHERE account_id = $1`, [accountId, through]);
    }
    if (events.length < REDACTION_CHUNK) {
      this.scannedTo.delete(accountId);
      return false;
    }
    this.scannedTo.set(accountId, events[events.length - 1].seq);
    return true;
  }

  private async redactEvents(manager: EntityManager, ended: ScannedEvent[], fields: ReadonlySet<string>): Promise<void> {
    const changed = ended.flatMap((event) => {
      const message = redactJsonText(event.message, fields);
      return message === null ? [] : [{ seq: event.seq, message }];
    });
    if (changed.length === 0) return;
    const seqs = changed.map((event) => event.seq);
    // Still ended when written: a redelivery that restarted it meanwhile is redacted once it ends again.
    await manager.query(
      `UPDATE events e SET message = v.message::json
         FROM unnest($1::bigint[], $2::text[]) AS v(seq, message)
        WHERE e.seq = v.seq AND e.seq = ANY($1::bigint[]) AND e.status IN ${FINAL_STATUS_LIST}`,
      [seqs, changed.map((event) => event.message)],
    );
    const attempts = await manager.query<{ event_seq: string; id: string; request_body: string }[]>(
      `SELECT event_seq::text AS event_seq, id::text AS id, request_body FROM delivery_attempts WHERE event_seq = ANY($1::bigint[])`,
      [seqs],
    );
    const bodies = attempts.flatMap((attempt) => {
      const body = redactRequestBody(attempt.request_body, fields);
      return body === null ? [] : [{ ...attempt, body }];
    });
    if (bodies.length === 0) return;
    await manager.query(
      `UPDATE delivery_attempts a SET request_body = v.body
         FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS v(event_seq, id, body)
        WHERE a.event_seq = v.event_seq AND a.id = v.id AND a.event_seq = ANY($1::bigint[])`,
      [bodies.map((row) => row.event_seq), bodies.map((row) => row.id), bodies.map((row) => row.body)],
    );
  }
}
