import { Module } from '@nestjs/common';
import { PartitionJob } from './partition-job.service';
import { RetentionService } from './retention.service';

/** Daily partitions created ahead, and hourly retention: expired days dropped, residual rows deleted. */
@Module({
  providers: [PartitionJob, RetentionService],
  exports: [PartitionJob, RetentionService],
})
export class RetentionModule {}
