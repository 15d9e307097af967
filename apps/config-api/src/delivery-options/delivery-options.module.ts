import { Module } from '@nestjs/common';
import { DestinationsModule } from '../destinations/destinations.module';
import { DeliveryOptionsService } from './delivery-options.service';

/** Delivery options (CONTRACT §9): one check and one store for every API that changes them. */
@Module({ imports: [DestinationsModule], providers: [DeliveryOptionsService], exports: [DeliveryOptionsService] })
export class DeliveryOptionsModule {}
