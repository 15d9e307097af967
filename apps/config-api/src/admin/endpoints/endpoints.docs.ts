import { ApiProperty } from '@nestjs/swagger';
import type { EndpointItem, ItemList } from '@app/payloads';

/* Documentation of GET /admin/v1/endpoints. */

export class TroubledEndpointModel implements EndpointItem {
  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty()
  email!: string;

  @ApiProperty()
  push_url!: string;

  @ApiProperty({ description: 'The origin the breaker is kept for.', example: 'https://receiver.example.com' })
  endpoint!: string;

  @ApiProperty({ enum: ['closed', 'open', 'half_open'] })
  breaker!: EndpointItem['breaker'];

  @ApiProperty({ type: 'integer' })
  consecutive_failures!: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  retry_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  last_error!: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  disabled_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  disabled_reason!: string | null;
}

export class TroubledEndpointListModel implements ItemList<EndpointItem> {
  @ApiProperty({ type: [TroubledEndpointModel], description: 'At most 500, most recent trouble first.' })
  items!: EndpointItem[];
}
