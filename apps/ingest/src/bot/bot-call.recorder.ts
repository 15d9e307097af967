import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import { BotCall, type BotCallOutcome, type BotWebhookType } from '@app/persistence';
import { cutUtf8, histogram, loggableError } from '@app/runtime';

/** Response bodies are kept up to this many bytes in the call log. */
export const RECORDED_BODY_BYTES = 4096;
/** Beyond this many unfinished inserts, callers wait for theirs: the database sets the pace, memory stays bounded. */
const MAX_PENDING_WRITES = 1000;

export interface BotCallRecord {
  accountId: number;
  botWebhookId: number | null;
  type: BotWebhookType;
  integrationName: string;
  url: string | null;
  requestBody: string | null;
  responseStatus: number | null;
  responseBody: string | null;
  answer: unknown;
  outcome: BotCallOutcome;
  error: string | null;
  durationMs: number;
}

/** The constraint a foreign-key violation names, if the error is one. */
function foreignKeyOf(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23503' ? (driverError.constraint ?? '') : undefined;
}

/**
 * Writes one `bot_calls` row per call without making the bot wait for the insert: the answer is sent
 * while the row is written. Pending inserts are tracked and awaited on shutdown; a failed insert is
 * logged (never silently dropped).
 */
@Injectable()
export class BotCallRecorder implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(BotCallRecorder.name);
  private readonly pending = new Set<Promise<void>>();
  private readonly duration = histogram(
    'bot_call_duration_seconds',
    'Time to answer one bot call (lookup, webhook call, answer check), by webhook type and outcome',
    ['type', 'outcome'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  observe(type: BotWebhookType, outcome: BotCallOutcome, durationMs: number): void {
    this.duration.observe({ type, outcome }, durationMs / 1000);
  }

  async record(call: BotCallRecord): Promise<void> {
    this.observe(call.type, call.outcome, call.durationMs);
    const write: Promise<void> = this.insert(call).finally(() => this.pending.delete(write));
    this.pending.add(write);
    if (this.pending.size > MAX_PENDING_WRITES) await write;
  }

  /** Resolves when every insert started so far has finished (tests and shutdown). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private async insert(call: BotCallRecord): Promise<void> {
    try {
      await this.save(call);
    } catch (error) {
      // The webhook was deleted while its lookup was still cached: keep the row, without the link.
      if (call.botWebhookId !== null && foreignKeyOf(error)?.includes('bot_webhook')) {
        return this.insert({ ...call, botWebhookId: null });
      }
      // Identifies the call without its body or anything secret.
      this.logger.error(
        { ...loggableError(error), accountId: call.accountId, type: call.type, integrationName: call.integrationName, outcome: call.outcome },
        'could not record a bot call',
      );
    }
  }

  private async save(call: BotCallRecord): Promise<void> {
    const repository = this.dataSource.getRepository(BotCall);
    // create() maps the fields onto the entity (its `answer` is typed unknown, which insert()'s partial type refuses; save() of a new row is one INSERT).
    const row = repository.create({
      ...call,
      responseBody: call.responseBody === null ? null : cutUtf8(call.responseBody, RECORDED_BODY_BYTES),
      answer: call.answer ?? null,
    });
    await repository.save(row, { reload: false, transaction: false });
  }

  /** Before the database connection closes (TypeORM closes it in onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }
}
