import { ArrayMaxSize, IsArray, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsRecordId, MAX_RECORD_ID, SUBJECT_KINDS } from '@app/payloads';

/** `customer:<id>`: one of §9's kinds, a colon, then the id as the message carries it (any text on one line). */
const SUBJECT = new RegExp(`^(${SUBJECT_KINDS.join('|')}):.{1,200}$`);
const SUBJECT_TEXT = `subject must be ${SUBJECT_KINDS.map((kind) => `${kind}:<id>`).join(', ')}`;

export class StartErasureDto {
  @ApiProperty({ description: `What the events are about (CONTRACT §9): ${SUBJECT_KINDS.map((kind) => `\`${kind}:<id>\``).join(', ')}.`, example: 'customer:10086' })
  @IsString({ message: SUBJECT_TEXT })
  @Matches(SUBJECT, { message: SUBJECT_TEXT })
  subject!: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID, description: "Only this account's events; every account's when absent." })
  @IsOptional()
  @IsRecordId()
  account_id?: number;
}

/** Key names are matched exactly, at any depth of the message. */
export const MAX_REDACTION_FIELDS = 50;
const FIELD = /^[^\s"]{1,64}$/;

export class RedactionDto {
  @ApiProperty({ type: [String], maxItems: MAX_REDACTION_FIELDS, description: 'Key names (exact, any depth) whose values stored copies hold as "[redacted]"; `[]` turns redaction off.', example: ['cellphone', 'email'] })
  @IsArray({ message: 'fields must be an array of key names' })
  @ArrayMaxSize(MAX_REDACTION_FIELDS, { message: `fields must hold at most ${MAX_REDACTION_FIELDS} names` })
  @IsString({ each: true, message: 'fields must hold strings' })
  @MaxLength(64, { each: true, message: 'fields must hold names of at most 64 characters' })
  @Matches(FIELD, { each: true, message: 'fields must hold names without spaces or quotes' })
  fields!: string[];
}
