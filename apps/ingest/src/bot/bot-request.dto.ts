import { ApiProperty } from '@nestjs/swagger';
import { BotField, BotIntegerField, BotStringField, BotStringMapField, HasTypedFields, IsRecordId, MAX_RECORD_ID } from '@app/payloads';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

/** What both bot calls name: whose webhook, and which one (the seed's integrationName). */
abstract class BotCallTargetDto {
  // IsRecordId is itself the composed check of an id (presence, integer, range), as on every admin route.
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID, description: 'Whose webhook to call.', example: 42 })
  @IsRecordId()
  account_id!: number;

  @BotField(
    'required',
    { type: 'string', minLength: 1, maxLength: 128, description: "Which of the account's webhooks of this type (its name, the seed's integrationName).", example: '对接一' },
    IsString({ message: '$property must be a string' }),
    IsNotEmpty(),
    MaxLength(128),
  )
  integration_name!: string;
}

/**
 * `extra` and `customerExtra` are the seed's open objects ("additional parameters", "custom additional
 * object"): the listed keys are type-checked, any other key is passed on to the webhook unchanged.
 */
export class MessageTriggerRequestDto extends BotCallTargetDto {
  @BotStringField('required', { example: '.*price.*' })
  regex!: string;

  @BotStringField('required', { example: 'What is the price?' })
  questionContent!: string;

  @BotField(
    'optional',
    { type: 'object', additionalProperties: true, description: '`chatappOpenId` (string) is type-checked; other keys are passed on.' },
    HasTypedFields({ chatappOpenId: 'string' }),
  )
  extra?: Record<string, unknown>;

  @BotField(
    'optional',
    { type: 'object', additionalProperties: true, description: '`customerId` (integer) is type-checked; other keys are passed on.' },
    HasTypedFields({ customerId: 'integer' }),
  )
  customerExtra?: Record<string, unknown>;
}

export class TaskPushRequestDto extends BotCallTargetDto {
  @BotIntegerField('required', { example: 100 })
  taskNodeId!: number;

  @BotIntegerField('required', { example: 100 })
  sessionId!: number;

  @BotStringMapField('optional')
  variables?: Record<string, string>;

  @BotField(
    'optional',
    {
      type: 'object',
      additionalProperties: true,
      description: '`customerId` (integer), `callerNumber` and `dialogueDesc` (strings) are type-checked; other keys are passed on.',
    },
    HasTypedFields({ customerId: 'integer', callerNumber: 'string', dialogueDesc: 'string' }),
  )
  customerExtra?: Record<string, unknown>;
}
