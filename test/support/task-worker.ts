import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { RuntimeModule } from '@app/runtime';
import { TasksModule } from '../../apps/delivery-worker/src/tasks/tasks.module';
import { type RunningApp, startApp } from './apps';

/**
 * The delivery worker's task half alone (TasksModule: the runners and the tasks queue), without its
 * delivery pipeline: for suites that count what a task restarted, whose jobs must stay in the queue.
 */
@Module({
  imports: [RuntimeModule, PersistenceModule.forRoot('delivery-worker'), TasksModule],
})
export class TaskWorkerModule {}

/** Starts the task runners in this process, as a delivery worker runs them. */
export function startTaskWorker(overrides: Record<string, string> = {}): Promise<RunningApp> {
  return startApp(TaskWorkerModule, overrides);
}
