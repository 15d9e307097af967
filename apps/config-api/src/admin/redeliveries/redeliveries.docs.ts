import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ApiErrorResponses } from '@app/runtime/docs';
import { ApiAdminOperation } from '../admin.docs';

/* Documentation of the bulk redelivery tasks' progress calls. */

export class RedeliveryTaskModel {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['running', 'done', 'failed'] })
  status!: string;

  @ApiProperty({ type: 'integer', description: 'Events the filter matched when the task started.' })
  total!: number;

  @ApiProperty({ type: 'integer', description: 'Events redelivered so far.' })
  done!: number;

  @ApiProperty({ type: 'integer', nullable: true })
  account_id!: number | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The filter as given (account_id, action, status, since, until, q).' })
  filter!: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  finished_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Why a failed task stopped.' })
  error!: string | null;
}

export class RedeliveryTaskListModel {
  @ApiProperty({ type: [RedeliveryTaskModel] })
  items!: RedeliveryTaskModel[];
}

export const ApiListRedeliveries = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('Recent bulk redelivery tasks', 200, RedeliveryTaskListModel, 'Newest first.'), ApiErrorResponses(422));

export const ApiRedeliveryTask = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation("A bulk redelivery task's progress", 200, RedeliveryTaskModel), ApiErrorResponses([404, 'No task with this id.']));
