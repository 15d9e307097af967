import { Module } from '@nestjs/common';
import { DeliveryProducer, DeliveryQueueModule, TaskQueueModule } from '@app/runtime';
import { AccountDeletionRunner } from './account-deletion-runner.service';
import { ErasureRunner } from './erasure-runner.service';
import { RedactionPass } from './redaction-pass.service';
import { RedeliveryRunner } from './redelivery-runner.service';
import { TaskJobs } from './task-jobs.service';

/**
 * Background work bounded by what it feeds: bulk redeliveries, erasures, offboardings and redaction at
 * rest. config-api records each as a row and announces it on the tasks queue; only workers run them.
 * The delivery queue is the worker's own (the same consumer connection), its producer the redeliveries'.
 */
@Module({
  imports: [DeliveryQueueModule.register('consumer'), TaskQueueModule.register('consumer')],
  providers: [DeliveryProducer, RedeliveryRunner, ErasureRunner, AccountDeletionRunner, RedactionPass, TaskJobs],
  exports: [RedeliveryRunner, ErasureRunner, AccountDeletionRunner, RedactionPass],
})
export class TasksModule {}
