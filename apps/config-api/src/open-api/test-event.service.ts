import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { type EventAction, isEventAction, SAMPLE_MESSAGES } from '@app/payloads';
import { Sql, storeEvents } from '@app/persistence';
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
    private readonly sql: Sql,
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
    // Stored like any event (its key claimed, its primary's delivery decided: a test event passes the
    // permission), only for the primary; when Redis is away the worker's reconciler enqueues it.
    const rows = await this.sql.rows(
      storeEvents.STORE_EVENTS,
      storeEvents.storeEventsParams([{ eventId, accountId, action, messageText: JSON.stringify(SAMPLE_MESSAGES[action]), permissionKey: null, test: true, takers: [] }]),
    );
    const steps = rows.filter((row) => row.kind === 'queued' && row.seq !== null).map((row) => firstDeliveryStep(row.seq as string, accountId));
    await this.producer.enqueue(steps);
    return { event_id: eventId };
  }
}
