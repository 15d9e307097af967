import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DELIVERY_ORDERINGS, type DeliveryOrdering, EVENT_ACTIONS, LOGGED_ACTIONS, MAX_PER_SECOND_MAX, MAX_PER_SECOND_MIN, PERMISSION_KEYS } from '@app/payloads';
import { ListEventsQueryDto } from '../admin/events/admin-events.dto';
import { BulkRedeliverDto } from '../admin/redeliveries/redelivery-task.dto';
import { StatsSeriesQueryDto } from '../admin/stats/stats.dto';

/** The admin event filters without account_id: the session says whose events. */
export class PortalEventsQueryDto extends OmitType(ListEventsQueryDto, ['account_id'] as const) {}

/** The admin series query without account_id. */
export class PortalHealthQueryDto extends OmitType(StatsSeriesQueryDto, ['account_id'] as const) {}

export class PortalRedeliverDto extends BulkRedeliverDto {
  @ApiPropertyOptional({ enum: LOGGED_ACTIONS })
  @IsOptional()
  @IsIn(LOGGED_ACTIONS, { message: `action must be one of ${LOGGED_ACTIONS.join(', ')}` })
  action?: string;
}

export class PortalTestEventDto {
  @ApiProperty({ enum: EVENT_ACTIONS, example: 'Customer_create' })
  @IsIn(EVENT_ACTIONS, { message: `action must be one of ${EVENT_ACTIONS.join(', ')}` })
  action!: (typeof EVENT_ACTIONS)[number];
}

class PermissionFlags {}
for (const key of PERMISSION_KEYS) ApiProperty({ type: 'boolean', required: false })(PermissionFlags.prototype, key);

/** Documentation of PUT /portal/v1/settings; the body is checked by the Open API's own rules (portal-settings.service.ts). */
export class PortalSettingsBody {
  @ApiPropertyOptional({ description: 'As `set_url`: an http(s) URL of at most 2048 characters whose host is public. Re-enables a disabled endpoint.' })
  push_url?: string;

  @ApiPropertyOptional({ enum: ['JSON', 'application/x-www-form-urlencoded'], description: 'As `set_push_content_type`, matched case-insensitively.' })
  push_content_type?: string;

  @ApiPropertyOptional({ type: PermissionFlags, description: 'As `set_permissions`: keys not sent keep their value.' })
  permissions?: Record<string, boolean>;

  @ApiPropertyOptional({ enum: DELIVERY_ORDERINGS, description: 'As `set_delivery_options`: one call at a time per subject, in accepted order, or none.' })
  ordering?: DeliveryOrdering;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: MAX_PER_SECOND_MIN, maximum: MAX_PER_SECOND_MAX, description: 'As `set_delivery_options`: calls started per second across all workers; null for no limit.' })
  max_per_second?: number | null;
}

export class PortalSettingsView {
  @ApiProperty({ type: 'string', nullable: true })
  push_url!: string | null;

  @ApiProperty({ enum: ['JSON', 'application/x-www-form-urlencoded'] })
  push_content_type!: string;

  @ApiProperty({ type: PermissionFlags })
  permissions!: Record<string, boolean>;

  @ApiProperty({ enum: DELIVERY_ORDERINGS })
  ordering!: DeliveryOrdering;

  @ApiProperty({ type: 'integer', nullable: true })
  max_per_second!: number | null;
}
