import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { DeliveryOptionsService } from './delivery-options.service';
import { DestinationsService } from './destinations.service';
import { PrimaryDestination } from './primary-destination.service';
import { OperationalEventsPublisher } from './operational-events.publisher';

/**
 * Destinations (CONTRACT §11), the primary included: one service behind three doors, each registered by
 * its own module next to the guards and error words it shares with its other routes (open-api/,
 * portal/, admin/destinations/), and the primary's seed-shaped settings (set_url and its siblings).
 */
@Module({
  imports: [DeliveryQueueModule.register('producer')],
  providers: [DestinationsService, PrimaryDestination, DeliveryOptionsService, OperationalEventsPublisher],
  exports: [DestinationsService, PrimaryDestination, DeliveryOptionsService, OperationalEventsPublisher],
})
export class DestinationsModule {}
