import { HasTypedFields, IsRecordId, IsStringMap } from '@app/payloads';
import { IsDefined, IsInt, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

const INTEGER = { message: '$property must be an integer' };
const STRING = { message: '$property must be a string' };

/** What both bot calls name: whose webhook, and which one (the seed's integrationName). */
abstract class BotCallTargetDto {
  @IsRecordId()
  account_id!: number;

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

  @IsDefined()
  @IsString(STRING)
  regex!: string;

  @IsDefined()
  @IsString(STRING)
  questionContent!: string;

  @IsOptional()
  @HasTypedFields({ chatappOpenId: 'string' })
  extra?: Record<string, unknown>;

  @IsOptional()
  @HasTypedFields({ customerId: 'integer' })
  customerExtra?: Record<string, unknown>;
}

export class TaskPushRequestDto extends BotCallTargetDto {

  @IsDefined()
  @IsInt(INTEGER)
  taskNodeId!: number;

  @IsDefined()
  @IsInt(INTEGER)
  sessionId!: number;

  @IsOptional()
  @IsStringMap()
  variables?: Record<string, string>;

  @IsOptional()
  @HasTypedFields({ customerId: 'integer', callerNumber: 'string', dialogueDesc: 'string' })
  customerExtra?: Record<string, unknown>;
}
