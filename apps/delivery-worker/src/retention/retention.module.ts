import { Module } from '@nestjs/common';
import { RetentionService } from './retention.service';

/** Hourly deletion of final events, their attempts and bot calls older than RETENTION_DAYS. */
@Module({
  providers: [RetentionService],
  exports: [RetentionService],
})
export class RetentionModule {}
