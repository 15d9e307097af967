import { Module } from '@nestjs/common';
import { DeliveryOptionsService } from './delivery-options.service';
import { DestinationsService } from './destinations.service';
import { PrimaryDestination } from './primary-destination.service';

/**
 * Destinations (CONTRACT §11), the primary included: one service behind three doors, each registered by
 * its own module next to the guards and error words it shares with its other routes (open-api/,
 * portal/, admin/destinations/), and the primary's seed-shaped settings (set_url and its siblings).
 */
@Module({
  providers: [DestinationsService, PrimaryDestination, DeliveryOptionsService],
  exports: [DestinationsService, PrimaryDestination, DeliveryOptionsService],
})
export class DestinationsModule {}
