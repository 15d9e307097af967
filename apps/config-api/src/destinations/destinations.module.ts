import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { DestinationDeliveries } from './destination-deliveries.service';
import { DestinationsAdminController } from './destinations-admin.controller';
import { DestinationsService } from './destinations.service';

/**
 * Destinations (CONTRACT §11): one service behind three doors. The admin door is here; the Open API and
 * portal doors are registered by their own modules, next to the guards they share with their other routes.
 */
@Module({
  imports: [DeliveryQueueModule.register('producer')],
  controllers: [DestinationsAdminController],
  providers: [DestinationsService, DestinationDeliveries],
  exports: [DestinationsService, DestinationDeliveries],
})
export class DestinationsModule {}
