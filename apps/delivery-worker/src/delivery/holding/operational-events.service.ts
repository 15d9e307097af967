import { Inject, Injectable, Logger } from '@nestjs/common';
import { OperationalEvents, Sql } from '@app/persistence';
import type { OperationalAction } from '@app/payloads';
import { DeliveryQueues, loggableErrorText, REDIS, type RedisClient, RedisKeys } from '@app/runtime';
import type { DestinationSettings } from '../destinations/destination-settings.cache';

/** The worker's side of the operational events (CONTRACT §14): what it sees of a destination's health, told to its account. */
@Injectable()
export class OperationalEventsService {
  private readonly logger = new Logger(OperationalEventsService.name);
  private readonly events: OperationalEvents;

  constructor(sql: Sql, @Inject(REDIS) redis: RedisClient, keys: RedisKeys, queues: DeliveryQueues) {
    this.events = new OperationalEvents(sql, redis, keys, (steps) => queues.addBulk(steps), (error) =>
      this.logger.warn(`could not store an operational event: ${loggableErrorText(error)}`),
    );
  }

  async emit(destination: Pick<DestinationSettings, 'accountId' | 'id' | 'shownTarget'>, action: OperationalAction, reason: string): Promise<void> {
    await this.events.emit({ accountId: destination.accountId, destinationId: destination.id, shownTarget: destination.shownTarget || null }, action, reason);
  }
}
