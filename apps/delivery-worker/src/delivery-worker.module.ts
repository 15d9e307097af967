import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { RuntimeModule } from '@app/runtime';
import { BacklogModule } from './backlog/backlog.module';
import { DeliveryModule } from './delivery/delivery.module';
import { RetentionModule } from './retention/retention.module';

/** The only consumer of the delivery queue (registered by DeliveryModule); serves nothing but health and metrics. */
@Module({
  imports: [RuntimeModule, PersistenceModule.forRoot('delivery-worker'), DeliveryModule, RetentionModule, BacklogModule],
})
export class DeliveryWorkerModule {}
