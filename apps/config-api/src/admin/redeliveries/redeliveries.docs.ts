import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiProperty } from '@nestjs/swagger';
import type { EventFilter, EventRedelivered, ItemList, RedeliveryStarted, RedeliveryTaskStatus, RedeliveryTaskView } from '@app/payloads';
import { ApiErrorResponses, ApiJsonBodyErrors } from '@app/runtime/docs';
import { adminEventsOperationId, ApiAccountOperation, ApiAdminOperation, BODY_FIELD_PROBLEM } from '../admin.docs';

/* Documentation of redelivery: one event, an account's or a filter's events as tasks, and the tasks' progress. */

export class EventRedeliveredModel implements EventRedelivered {
  @ApiProperty()
  event_id!: string;

  @ApiProperty({ enum: ['queued'] })
  status!: 'queued';

  @ApiProperty({ type: 'integer', description: 'The new attempt series.' })
  series!: number;
}

/** `{"count", "task_id"}` of a bulk redelivery. */
export class RedeliveryStartedModel implements RedeliveryStarted {
  @ApiProperty({
    type: 'integer',
    description: 'Deliveries the filter matched, all of them redelivered (not a page): the events whose primary delivery is in the status, plus the deliveries in that status to the other destinations (CONTRACT §11) of events the rest of the filter matches.',
  })
  count!: number;

  @ApiProperty({ format: 'uuid', description: 'Read its progress at `GET /admin/v1/redeliveries/{task_id}`.' })
  task_id!: string;
}

export class RedeliveryTaskModel implements RedeliveryTaskView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['running', 'done', 'failed'] })
  status!: RedeliveryTaskStatus;

  @ApiProperty({ type: 'integer', description: 'Events the filter matched when the task started.' })
  total!: number;

  @ApiProperty({ type: 'integer', description: 'Events redelivered so far.' })
  done!: number;

  @ApiProperty({ type: 'integer', nullable: true })
  account_id!: number | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The filter as given (account_id, action, status, since, until, q).' })
  filter!: EventFilter;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  finished_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Why a failed task stopped.' })
  error!: string | null;
}

export class RedeliveryTaskListModel implements ItemList<RedeliveryTaskView> {
  @ApiProperty({ type: [RedeliveryTaskModel] })
  items!: RedeliveryTaskView[];
}

export const ApiListRedeliveries = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('Recent bulk redelivery tasks', 200, RedeliveryTaskListModel, 'Newest first.'), ApiErrorResponses([400, 'A query parameter is malformed or out of range; `details` names it.']));

export const ApiRedeliveryTask = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation("A bulk redelivery task's progress", 200, RedeliveryTaskModel), ApiErrorResponses([404, 'No task with this id.']));

/** The optional body of an event's redelivery (CONTRACT §11). */
export class RedeliverEventBody {
  @ApiProperty({ required: false, example: 'dst_5f0c1e0a9b7d4c3e8a2b6d1f', description: 'Only this destination (`primary`: the push_url); absent: every destination that took the event.' })
  destination_id?: string;
}

export const ApiRedeliverEvent = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation(
      'Redeliver one event',
      202,
      EventRedeliveredModel,
      'A new attempt series starts now, to every destination that took the event (deleted ones excepted), or only to `destination_id`; its first call is made even when the circuit is open. `series` is the primary\'s, or the destination\'s when one is named.',
      adminEventsOperationId('redeliver'),
    ),
    ApiBody({ type: RedeliverEventBody, required: false }),
    ApiErrorResponses([404, 'The event does not exist, or has no delivery to destination_id.'], [422, 'destination_id is not "primary" or a destination id, or the body has another key.']),
  );

export const ApiRedeliverMatching = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation('Redeliver every event a filter matches', 202, RedeliveryStartedModel, 'A background task (stored, resumed after a restart); status defaults to failed; at least one filter is required.', adminEventsOperationId('redeliverMatching')),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, 'The account_id does not exist.'], [422, 'No filter given, or a filter is invalid.']),
  );

export const ApiRedeliverAccount = (): MethodDecorator =>
  applyDecorators(
    ApiJsonBodyErrors(),
    ApiAccountOperation(
      ApiAdminOperation("Redeliver an account's events in a status", 202, RedeliveryStartedModel, 'A background task; read its progress with the task_id.', adminEventsOperationId('redeliverAccount')),
      [422, BODY_FIELD_PROBLEM],
    ),
  );
