import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import type { AuditEntryView } from '@app/payloads';
import { ApiErrorResponses } from '@app/runtime/docs';
import { ApiAdminOperation, CursorPageModel } from '../admin.docs';

/* Documentation of GET /admin/v1/audit (CONTRACT §15). */

export class AuditEntryModel implements AuditEntryView {
  @ApiProperty({ description: 'Opaque, increasing.' })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({ description: "A token's name (`ADMIN_TOKEN` for that one), the signed-in user's email (or subject), or `account:<id>`." })
  actor!: string;

  @ApiProperty({ enum: ['viewer', 'operator', 'admin'], nullable: true, description: 'null for API users.' })
  role!: AuditEntryView['role'];

  @ApiProperty({ enum: ['token', 'oidc', 'open_api', 'portal'] })
  via!: AuditEntryView['via'];

  @ApiProperty({ description: 'A dotted word: `account.create`, `destination.update`, `set_url`, `signin`, `signin.refused`, `signout`…' })
  action!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  account_id!: number | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'What was acted on besides the account: an event, destination, bot webhook or erasure id.' })
  target!: string | null;

  @ApiProperty({ type: 'integer', description: 'The HTTP status answered.' })
  status!: number;

  @ApiProperty({ type: 'string', nullable: true })
  ip!: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'The request id of the log line of the same call.' })
  request_id!: string | null;
}

export class AuditPageModel extends CursorPageModel<AuditEntryView>(AuditEntryModel, 'Pass as `cursor` for the next (older) page; null on the last.') {}

export const ApiListAudit = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation(
      'The audit log',
      200,
      AuditPageModel,
      'Every admin write, every Open API and portal write of an API user, every sign-in, sign-out and refused sign-in, newest first. Admins only. No entry ever holds a secret, a token or a body; no API changes or deletes one.',
    ),
    ApiErrorResponses([400, 'A query parameter is malformed or out of range; `details` names it.']),
  );
