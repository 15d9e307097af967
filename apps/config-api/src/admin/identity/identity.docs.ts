import { ApiProperty } from '@nestjs/swagger';
import type { AdminSessionView } from '@app/payloads';

export class AdminSessionModel implements AdminSessionView {
  @ApiProperty({ description: "A token's name (`ADMIN_TOKEN` for that one), or the signed-in user's email (or subject)." })
  actor!: string;

  @ApiProperty({ enum: ['viewer', 'operator', 'admin'] })
  role!: AdminSessionView['role'];

  @ApiProperty({ enum: ['token', 'oidc'] })
  via!: AdminSessionView['via'];

  @ApiProperty({ type: 'string', nullable: true, description: 'Sent as `x-csrf-token` with every write made with the session cookie; null for bearer tokens.' })
  csrf_token!: string | null;
}
