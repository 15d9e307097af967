import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { type EventAction, isEventAction, SAMPLE_MESSAGES } from '@app/payloads';
import { NEW_EVENT_STEP_VALUES } from '@app/persistence';
import { DeliveryProducer, firstDeliveryStep, MinuteLimit, REDIS, type RedisClient, RedisKeys } from '@app/runtime';

export const TEST_EVENT_ID_PREFIX = 'test_';

/** Test events a minute per account, the portal's and the Open API's together (CONTRACT §10). */
export const TEST_EVENTS_PER_MINUTE = 10;

/** The account has sent its test events of this minute; each caller words the 429 in its own format. */
export class TestEventLimitError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`more than ${TEST_EVENTS_PER_MINUTE} test events a minute for this account; retry in ${retryAfterSeconds} s`);
    this.name = 'TestEventLimitError';
  }
}

export interface TestEventSent {
  event_id: string;
}

/** Why an action was refused, for the caller to word in its own error format (Open API code 2000 or 422). */
export const TEST_EVENT_ACTION_PROBLEM = 'action must be one of the eleven event actions, e.g. Customer_create';

export function readTestEventAction(body: unknown): EventAction | null {
  const action = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).action : undefined;
  return isEventAction(action) ? action : null;
}

/**
 * A test event (CONTRACT §10): the example message of the action, stored and queued like an ingested
 * event and marked `test`, so the worker pushes it even when the action's permission is off. It goes
 * through the same delivery path as any event: signed, logged with its attempts, retried.
 */
@Injectable()
export class TestEventService {
  private readonly limit: MinuteLimit;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly producer: DeliveryProducer,
    @Inject(REDIS) redis: RedisClient,
    keys: RedisKeys,
  ) {
    this.limit = new MinuteLimit(redis, keys.testEventsLimit(), TEST_EVENTS_PER_MINUTE);
  }

  /**
   * Throws TestEventLimitError past the account's test events of the minute, and LimitUnavailableError
   * when Redis cannot count (it could not queue the event either).
   */
  async send(accountId: number, action: EventAction): Promise<TestEventSent> {
    const retryAfterSeconds = await this.limit.take(String(accountId));
    if (retryAfterSeconds !== null) throw new TestEventLimitError(retryAfterSeconds);
    const eventId = `${TEST_EVENT_ID_PREFIX}${randomBytes(16).toString('hex')}`;
    const rows = await this.dataSource.query<{ seq: string }[]>(
      `INSERT INTO events (event_id, account_id, action, message, status, next_attempt_at, test)
       VALUES ($1, $2, $3, $4::json, ${NEW_EVENT_STEP_VALUES}, true)
       RETURNING seq::text AS seq`,
      [eventId, accountId, action, JSON.stringify(SAMPLE_MESSAGES[action])],
    );
    // Stored first: when Redis is away the worker's reconciler enqueues it.
    await this.producer.enqueue([firstDeliveryStep(rows[0].seq, accountId)]);
    return { event_id: eventId };
  }
}
