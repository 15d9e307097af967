import { Inject, Injectable, Logger } from '@nestjs/common';
import { OperationalEvents, Sql } from '@app/persistence';
import { DeliveryProducer, loggableErrorText, REDIS, type RedisClient, RedisKeys } from '@app/runtime';

/** config-api's side of the operational events (CONTRACT §14): a destination enabled again is `Destination_recovered`. */
@Injectable()
export class OperationalEventsPublisher {
  private readonly logger = new Logger(OperationalEventsPublisher.name);
  private readonly events: OperationalEvents;

  constructor(sql: Sql, @Inject(REDIS) redis: RedisClient, keys: RedisKeys, producer: DeliveryProducer) {
    this.events = new OperationalEvents(sql, redis, keys, async (steps) => void (await producer.enqueue(steps)), (error) =>
      this.logger.warn(`could not store an operational event: ${loggableErrorText(error)}`),
    );
  }

  async enabledAgain(accountId: number, destinationId: string, shownTarget: string | null, how: string): Promise<void> {
    await this.events.emit({ accountId, destinationId, shownTarget }, 'Destination_recovered', `enabled again (${how})`);
  }
}
