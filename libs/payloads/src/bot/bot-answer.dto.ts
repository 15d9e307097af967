import { BotIntegerField, BotObjectField, BotOneOfField, BotStringField, BotStringMapField } from './bot-field.decorators';
import { type BotMessage, BotMessageDto } from './bot-message.dto';

/** A message-trigger webhook's answer (seed: "Response (JSON): answerContent string"). */
export class MessageTriggerAnswerDto {
  @BotStringField('required', { description: 'The answer shown to the customer.', example: 'The price is 10 USD.' })
  answerContent!: string;
}

/**
 * A task-push webhook's answer (seed: the response table of "Bot webhook, task push type"). `message`
 * is only checked to be an object here; `validateTaskPushAnswer` checks its msgType/msgContent.
 */
export class TaskPushAnswerDto {
  @BotOneOfField([0, -1], 'must be 0 (success) or -1 (failure)', 'required', { type: 'integer', description: '0 success, -1 failure.' })
  resCode!: number;

  @BotStringField('optional', { nullable: true, description: 'Why it failed (with resCode -1).' })
  resError?: string;

  @BotObjectField('optional', { type: () => BotMessageDto, nullable: true, description: 'The message the bot sends: `msgType` and its `msgContent`.' })
  message?: unknown;

  @BotStringMapField('optional', { nullable: true, description: 'Variables to set (string values).' })
  variables?: Record<string, string>;

  @BotIntegerField('optional', { nullable: true, description: 'The task node to go to.' })
  toTaskNodeId?: number;

  @BotOneOfField([1, 2], 'must be 1 (direct trigger) or 2 (wait for reply)', 'optional', { type: 'integer', nullable: true, description: '1 direct trigger, 2 wait for the reply.' })
  routeType?: number;

  @BotStringField('optional', { nullable: true, description: 'A command for the bot.' })
  command?: string;
}

export interface MessageTriggerAnswer {
  answerContent: string;
  [unlisted: string]: unknown;
}

export interface TaskPushAnswer {
  resCode: 0 | -1;
  resError?: string | null;
  message?: BotMessage | null;
  variables?: Record<string, string> | null;
  toTaskNodeId?: number | null;
  routeType?: 1 | 2 | null;
  command?: string | null;
  [unlisted: string]: unknown;
}
