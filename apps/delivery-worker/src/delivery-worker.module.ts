import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { RuntimeModule } from '@app/runtime';
import { BacklogModule } from './backlog/backlog.module';
import { DeliveryModule } from './delivery/delivery.module';
import { RetentionModule } from './retention/retention.module';
import { TasksModule } from './tasks/tasks.module';

/**
 * The only consumer of the delivery queue (registered by DeliveryModule) and the only process that runs
 * background tasks (TasksModule); serves nothing but health and metrics.
 */
@Module({
  imports: [RuntimeModule, PersistenceModule.forRoot('delivery-worker'), DeliveryModule, TasksModule, RetentionModule, BacklogModule],
})
export class DeliveryWorkerModule {}
