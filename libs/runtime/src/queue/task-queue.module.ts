import { type DynamicModule, Module } from '@nestjs/common';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { TaskQueue, type TaskQueueRole } from './task-queue';

/**
 * The tasks queue with the connection its role needs: config-api announces tasks, the delivery worker
 * takes them. One module object per role, so an app's modules share one TaskQueue (see DeliveryQueueModule).
 */
@Module({})
export class TaskQueueModule {
  private static readonly registered = new Map<TaskQueueRole, DynamicModule>();

  static register(role: TaskQueueRole): DynamicModule {
    let registered = TaskQueueModule.registered.get(role);
    if (!registered) {
      registered = TaskQueueModule.build(role);
      TaskQueueModule.registered.set(role, registered);
    }
    return registered;
  }

  private static build(role: TaskQueueRole): DynamicModule {
    return {
      module: TaskQueueModule,
      providers: [
        {
          provide: TaskQueue,
          inject: [ENVIRONMENT],
          useFactory: async (environment: Environment): Promise<TaskQueue> => {
            const queue = TaskQueue.open(environment, role);
            await queue.ready(3000);
            return queue;
          },
        },
      ],
      exports: [TaskQueue],
    };
  }
}
