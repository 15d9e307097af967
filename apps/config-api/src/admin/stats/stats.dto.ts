import { IsIn, IsOptional } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { SERIES_BUCKETS, type SeriesBucket } from '@app/payloads';
import { TIMESTAMP_TEXT, TimestampFilter } from '../timestamp';
import { AccountIdFilter } from '../page-query.decorators';

export class StatsQueryDto {
  @AccountIdFilter()
  account_id?: number;

  @TimestampFilter({ description: TIMESTAMP_TEXT })
  since?: string;
}

export class StatsSeriesQueryDto {
  @AccountIdFilter()
  account_id?: number;

  @TimestampFilter({ description: 'Default: until minus 1 h (1m), 24 h (1h) or 7 d (1d). ' + TIMESTAMP_TEXT })
  since?: string;

  @TimestampFilter({ description: 'Default: now. ' + TIMESTAMP_TEXT })
  until?: string;

  @ApiPropertyOptional({ enum: SERIES_BUCKETS, default: '1m' })
  @IsOptional()
  @IsIn(SERIES_BUCKETS, { message: `bucket must be one of ${SERIES_BUCKETS.join(', ')}` })
  bucket?: SeriesBucket;
}
