import { IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import type { BotMessage } from './bot-message.dto';
import { IsStringMap } from './string-map.validator';

/** A message-trigger webhook's answer (seed: "Response (JSON): answerContent string"). */
export class MessageTriggerAnswerDto {
  @IsDefined({ message: '$property is required' })
  @IsString({ message: '$property must be a string' })
  answerContent!: string;
}

/**
 * A task-push webhook's answer (seed: the response table of "Bot webhook, task push type"). `message`
 * is only checked to be an object here; `validateTaskPushAnswer` checks its msgType/msgContent.
 */
export class TaskPushAnswerDto {
  @IsDefined({ message: '$property is required' })
  @IsIn([0, -1], { message: '$property must be 0 (success) or -1 (failure)' })
  resCode!: number;

  @IsOptional()
  @IsString({ message: '$property must be a string' })
  resError?: string;

  @IsOptional()
  @IsObject({ message: '$property must be an object' })
  message?: unknown;

  @IsOptional()
  @IsStringMap()
  variables?: Record<string, string>;

  @IsOptional()
  @IsInt({ message: '$property must be an integer' })
  toTaskNodeId?: number;

  @IsOptional()
  @IsIn([1, 2], { message: '$property must be 1 (direct trigger) or 2 (wait for reply)' })
  routeType?: number;

  @IsOptional()
  @IsString({ message: '$property must be a string' })
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
