import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { MessageTriggerWebhookCall, TaskPushWebhookCall } from '@app/payloads';

/*
 * Bodies of the bot webhook calls the service sends (CONTRACT §6), as documentation models. The worker and
 * the bot call builder write these bodies; the delivery and bot-webhook e2e tests pin their exact shape.
 */

export class MessageTriggerWebhookBody implements MessageTriggerWebhookCall {
  @ApiProperty({ description: 'The webhook\'s name (the seed\'s integrationName); it is signed into `sign`.', example: '对接一' })
  integrationName!: string;

  @ApiProperty({ description: 'The rule that matched the customer\'s question.', example: '.*price.*' })
  regex!: string;

  @ApiProperty({ description: 'The customer\'s question.', example: 'What is the price?' })
  questionContent!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Additional parameters, e.g. `{"chatappOpenId": "…"}`; sent only when the bot gave them.' })
  extra?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Custom customer data, e.g. `{"customerId": 12}`; sent only when the bot gave it.' })
  customerExtra?: Record<string, unknown>;
}

export class TaskPushWebhookBody implements TaskPushWebhookCall {
  @ApiProperty({ type: 'integer', example: 100 })
  taskNodeId!: number;

  @ApiProperty({ type: 'integer', example: 100 })
  sessionId!: number;

  @ApiProperty({ type: 'integer', description: 'Unix seconds when the call was signed.', example: 1551510709 })
  timestamp!: number;

  @ApiProperty({
    description: 'Lowercase hex MD5 of key, taskNodeId, sessionId and timestamp concatenated with no separator. Test vector: key `abcde`, 100, 100, 1551510709 → `9195e2a5c1d84b86dc59819f29a0e300`.',
    pattern: '^[0-9a-f]{32}$',
    example: '9195e2a5c1d84b86dc59819f29a0e300',
  })
  sign!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'Task variables (string values); sent only when the bot gave them.' })
  variables?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Custom customer data (`customerId`, `callerNumber`, `dialogueDesc`, …); sent only when the bot gave it.',
  })
  customerExtra?: Record<string, unknown>;
}
