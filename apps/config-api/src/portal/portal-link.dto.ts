import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { DEFAULT_LINK_TTL } from '../portal-access/portal-ttl';

export class PortalLinkDto {
  @ApiPropertyOptional({ description: 'How long the link works: a duration from 1s to 24h.', default: DEFAULT_LINK_TTL, example: '2h' })
  @IsOptional()
  @IsString({ message: 'ttl must be a duration from 1s to 24h such as 15m, 2h or 3600s' })
  ttl?: string;
}

export class PortalLinkView {
  @ApiProperty({ example: 'https://callbacks.example.com/portal#Yl5o0yq3m2m9cLk2Qh2K9d6rjTn5b1dV8w3X0p4s7aE', description: '`<PUBLIC_URL>/portal#<code>`: the code rides in the fragment, works once, until `expires_at`.' })
  url!: string;

  @ApiProperty({ format: 'date-time' })
  expires_at!: string;
}

export class OpenSessionDto {
  @ApiProperty({ description: 'The code from the portal link (what follows `#`).' })
  @IsString({ message: 'code must be the text after # in a portal link' })
  code!: string;
}

export class PortalSessionView {
  @ApiProperty({ description: 'Sent as `Authorization: Bearer <token>` on every /portal/v1 call; kept for the browser tab only.' })
  token!: string;

  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty({ format: 'date-time', description: 'Sessions last 8 hours.' })
  expires_at!: string;
}
