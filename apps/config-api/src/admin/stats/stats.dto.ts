import { IsIn, IsOptional } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsRecordId, MAX_RECORD_ID, SERIES_BUCKETS, type SeriesBucket } from '@app/payloads';
import { IsTimestamp, TIMESTAMP_TEXT } from '../timestamp';

export class StatsQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID })
  @IsOptional()
  @IsRecordId({ fromQuery: true })
  account_id?: number;

  @ApiPropertyOptional({ description: TIMESTAMP_TEXT })
  @IsOptional()
  @IsTimestamp()
  since?: string;
}

export class StatsSeriesQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID })
  @IsOptional()
  @IsRecordId({ fromQuery: true })
  account_id?: number;

  @ApiPropertyOptional({ description: 'Default: until minus 1 h (1m), 24 h (1h) or 7 d (1d). ' + TIMESTAMP_TEXT })
  @IsOptional()
  @IsTimestamp()
  since?: string;

  @ApiPropertyOptional({ description: 'Default: now. ' + TIMESTAMP_TEXT })
  @IsOptional()
  @IsTimestamp()
  until?: string;

  @ApiPropertyOptional({ enum: SERIES_BUCKETS, default: '1m' })
  @IsOptional()
  @IsIn(SERIES_BUCKETS, { message: `bucket must be one of ${SERIES_BUCKETS.join(', ')}` })
  bucket?: SeriesBucket;
}
