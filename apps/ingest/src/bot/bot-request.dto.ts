import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { HasTypedFields, IsRecordId, IsStringMap, MAX_RECORD_ID } from '@app/payloads';
import { IsDefined, IsInt, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

const INTEGER = { message: '$property must be an integer' };
const STRING = { message: '$property must be a string' };

/** What both bot calls name: whose webhook, and which one (the seed's integrationName). */
abstract class BotCallTargetDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID, description: 'Whose webhook to call.', example: 42 })
  @IsRecordId()
  account_id!: number;

  @ApiProperty({ minLength: 1, maxLength: 128, description: "Which of the account's webhooks of this type (its name, the seed's integrationName).", example: '对接一' })
  @IsString(STRING)
  @IsNotEmpty()
  @MaxLength(128)
  integration_name!: string;
}

/**
 * `extra` and `customerExtra` are the seed's open objects ("additional parameters", "custom additional
 * object"): the listed keys are type-checked, any other key is passed on to the webhook unchanged.
 */
export class MessageTriggerRequestDto extends BotCallTargetDto {

  @ApiProperty({ example: '.*price.*' })
  @IsDefined()
  @IsString(STRING)
  regex!: string;

  @ApiProperty({ example: 'What is the price?' })
  @IsDefined()
  @IsString(STRING)
  questionContent!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`chatappOpenId` (string) is type-checked; other keys are passed on.' })
  @IsOptional()
  @HasTypedFields({ chatappOpenId: 'string' })
  extra?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`customerId` (integer) is type-checked; other keys are passed on.' })
  @IsOptional()
  @HasTypedFields({ customerId: 'integer' })
  customerExtra?: Record<string, unknown>;
}

export class TaskPushRequestDto extends BotCallTargetDto {

  @ApiProperty({ type: 'integer', example: 100 })
  @IsDefined()
  @IsInt(INTEGER)
  taskNodeId!: number;

  @ApiProperty({ type: 'integer', example: 100 })
  @IsDefined()
  @IsInt(INTEGER)
  sessionId!: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional()
  @IsStringMap()
  variables?: Record<string, string>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`customerId` (integer), `callerNumber` and `dialogueDesc` (strings) are type-checked; other keys are passed on.' })
  @IsOptional()
  @HasTypedFields({ customerId: 'integer', callerNumber: 'string', dialogueDesc: 'string' })
  customerExtra?: Record<string, unknown>;
}
