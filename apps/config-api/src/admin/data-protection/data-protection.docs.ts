import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiProperty } from '@nestjs/swagger';
import type { ErasureStarted, ErasureStatus, ErasureView } from '@app/payloads';
import { ApiErrorResponses, ApiJsonBodyErrors } from '@app/runtime/docs';
import { AccountModel } from '../accounts/accounts.docs';
import type { AccountDeletionStarted } from './account-deletion.service';
import { ApiAccountOperation, ApiAdminOperation, ApiIdParam, BODY_FIELD_PROBLEM, ID_PARAM_PROBLEM } from '../admin.docs';

/* Documentation of data protection (CONTRACT §12): erasures by subject, redaction at rest, offboarding. */

export const DATA_PROTECTION_TAG = 'Admin: data protection';

export class ErasureStartedModel implements ErasureStarted {
  @ApiProperty({ format: 'uuid', description: 'Follow it at `GET /admin/v1/erasures/{id}`.' })
  id!: string;

  @ApiProperty({ enum: ['running'] })
  status!: 'running';
}

export class ErasureModel implements ErasureView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['running', 'done'] })
  status!: ErasureStatus;

  @ApiProperty({ type: 'integer', description: 'Events erased so far.' })
  events_erased!: number;
}

export class AccountDeletionModel implements AccountDeletionStarted {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ enum: ['deleting'] })
  status!: 'deleting';
}

export const ApiStartErasure = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation(
      'Erase a subject',
      202,
      ErasureStartedModel,
      "Every stored event of the subject (of the account, or of every account) accepted before now loses its message and its attempts' request and response bodies; ids, action, times and statuses stay. A delivery still pending for it ends `failed`, `last_error` `erased`, and is never sent. A background task (stored, resumed after a restart).",
    ),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, 'The account_id does not exist.'], [422, BODY_FIELD_PROBLEM]),
  );

export const ApiErasure = (): MethodDecorator =>
  applyDecorators(
    ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } }),
    ApiAdminOperation("An erasure's progress", 200, ErasureModel),
    ApiErrorResponses([404, 'No erasure with this id.']),
  );

export const ApiSetRedaction = (): MethodDecorator =>
  applyDecorators(
    ApiJsonBodyErrors(),
    ApiAccountOperation(
      ApiAdminOperation(
        'Set the fields redacted at rest',
        200,
        AccountModel,
        'Callbacks still carry these keys; once an event has ended, its stored message and its attempts\' request bodies hold "[redacted]" as the value of every key of these names at any depth (events that ended before are redacted in the background too). `[]` stops redacting new events.',
      ),
      [422, BODY_FIELD_PROBLEM],
    ),
  );

export const ApiDeleteAccount = (): MethodDecorator =>
  applyDecorators(
    ApiIdParam(),
    ApiAdminOperation(
      'Delete an account (offboarding)',
      202,
      AccountDeletionModel,
      'From this answer on its Open API token (2059), portal sessions and links (401), bot webhooks (404) and callbacks stop, and ingest answers 404 for it; its events and attempts are deleted in the background, then the account, which frees its email.',
    ),
    ApiErrorResponses([404, 'The account does not exist (or is already being deleted).'], [400, ID_PARAM_PROBLEM]),
  );
