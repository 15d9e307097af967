import { IsIn, IsOptional } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';

export const ENDPOINT_FILTERS = ['open', 'disabled', 'all'] as const;

export class ListEndpointsQueryDto {
  /** open: breaker open or half open; disabled: stopped by the worker; all (default): either. */
  @ApiPropertyOptional({ enum: ENDPOINT_FILTERS, default: 'all', description: 'open: breaker open or half open; disabled: stopped by the worker; all: either.' })
  @IsOptional()
  @IsIn(ENDPOINT_FILTERS, { message: `state must be one of ${ENDPOINT_FILTERS.join(', ')}` })
  state?: (typeof ENDPOINT_FILTERS)[number];
}
