import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import { type BotMessage, BotMessageDto } from './bot-message.dto';
import { IsStringMap } from './string-map.validator';

/** A message-trigger webhook's answer (seed: "Response (JSON): answerContent string"). */
export class MessageTriggerAnswerDto {
  @ApiProperty({ description: 'The answer shown to the customer.', example: 'The price is 10 USD.' })
  @IsDefined({ message: '$property is required' })
  @IsString({ message: '$property must be a string' })
  answerContent!: string;
}

/**
 * A task-push webhook's answer (seed: the response table of "Bot webhook, task push type"). `message`
 * is only checked to be an object here; `validateTaskPushAnswer` checks its msgType/msgContent.
 */
export class TaskPushAnswerDto {
  @ApiProperty({ type: 'integer', enum: [0, -1], description: '0 success, -1 failure.' })
  @IsDefined({ message: '$property is required' })
  @IsIn([0, -1], { message: '$property must be 0 (success) or -1 (failure)' })
  resCode!: number;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Why it failed (with resCode -1).' })
  @IsOptional()
  @IsString({ message: '$property must be a string' })
  resError?: string;

  @ApiPropertyOptional({ type: () => BotMessageDto, nullable: true, description: 'The message the bot sends: `msgType` and its `msgContent`.' })
  @IsOptional()
  @IsObject({ message: '$property must be an object' })
  message?: unknown;

  @ApiPropertyOptional({ type: 'object', nullable: true, additionalProperties: { type: 'string' }, description: 'Variables to set (string values).' })
  @IsOptional()
  @IsStringMap()
  variables?: Record<string, string>;

  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'The task node to go to.' })
  @IsOptional()
  @IsInt({ message: '$property must be an integer' })
  toTaskNodeId?: number;

  @ApiPropertyOptional({ type: 'integer', enum: [1, 2], nullable: true, description: '1 direct trigger, 2 wait for the reply.' })
  @IsOptional()
  @IsIn([1, 2], { message: '$property must be 1 (direct trigger) or 2 (wait for reply)' })
  routeType?: number;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'A command for the bot.' })
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
