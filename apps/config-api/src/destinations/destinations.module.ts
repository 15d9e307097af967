import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { DestinationDeliveries } from './destination-deliveries.service';
import { DestinationsService } from './destinations.service';

/**
 * Destinations (CONTRACT §11): one service behind three doors, each registered by its own module next to
 * the guards and error words it shares with its other routes (open-api/, portal/, admin/destinations/).
 */
@Module({
  imports: [DeliveryQueueModule.register('producer')],
  providers: [DestinationsService, DestinationDeliveries],
  exports: [DestinationsService, DestinationDeliveries],
})
export class DestinationsModule {}
