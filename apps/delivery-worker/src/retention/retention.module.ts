import { Module } from '@nestjs/common';
import { BooksFolder } from './books-folder.service';
import { PartitionJob } from './partition-job.service';
import { RetentionService } from './retention.service';

/** Daily partitions created ahead, hourly retention (expired days dropped, residual rows deleted), and the books folded. */
@Module({
  providers: [PartitionJob, RetentionService, BooksFolder],
  exports: [PartitionJob, RetentionService, BooksFolder],
})
export class RetentionModule {}
