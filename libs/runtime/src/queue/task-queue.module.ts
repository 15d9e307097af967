import { type DynamicModule, Module } from '@nestjs/common';
import { onePerRole, queueProvider } from './queue-modules';
import { TaskQueue, type TaskQueueRole } from './task-queue';

/**
 * The tasks queue with the connection its role needs: config-api announces tasks, the delivery worker
 * takes them. One module object per role, like DeliveryQueueModule.
 */
@Module({})
export class TaskQueueModule {
  static readonly register = onePerRole(
    (role: TaskQueueRole): DynamicModule => ({
      module: TaskQueueModule,
      providers: [queueProvider(TaskQueue, (environment) => TaskQueue.open(environment, role))],
      exports: [TaskQueue],
    }),
  );
}
