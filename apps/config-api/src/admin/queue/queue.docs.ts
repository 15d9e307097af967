import { ApiProperty } from '@nestjs/swagger';
import type { QueueState } from '@app/payloads';

/* Documentation of GET /admin/v1/queue. */

export class QueueDepthModel implements QueueState {
  @ApiProperty({ type: 'integer', description: 'Jobs ready to run now, over every shard.' })
  waiting!: number;

  @ApiProperty({ type: 'integer' })
  active!: number;

  @ApiProperty({ type: 'integer', description: 'Scheduled for later (retries).' })
  delayed!: number;

  @ApiProperty({ type: 'integer' })
  failed!: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the oldest job that is due and not yet taken became due.' })
  oldest_waiting_at!: string | null;

  @ApiProperty({ type: 'number', nullable: true })
  oldest_waiting_age_seconds!: number | null;
}
