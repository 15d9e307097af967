import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import type { BotCallOutcome, BotCallView, BotWebhookType, BotWebhookView, ItemList } from '@app/payloads';
import { BOT_CALL_OUTCOMES, BOT_WEBHOOK_TYPES } from '@app/persistence';
import { ApiErrorResponses, ApiJsonBodyErrors } from '@app/runtime/docs';
import { ApiAccountOperation, ApiAdminOperation, ApiIdParam, BODY_FIELD_PROBLEM, CursorPageModel, ID_PARAM_PROBLEM } from '../admin.docs';

/* Documentation of an account's bot webhooks and the bot call log (CONTRACT §3, §6). */

export class BotWebhookModel implements BotWebhookView {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty({ description: "The seed's integrationName." })
  name!: string;

  @ApiProperty({ enum: BOT_WEBHOOK_TYPES })
  type!: BotWebhookType;

  @ApiProperty()
  url!: string;

  @ApiProperty({ type: 'integer' })
  timeout_ms!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

export class BotWebhookListModel implements ItemList<BotWebhookView> {
  @ApiProperty({ type: [BotWebhookModel] })
  items!: BotWebhookView[];
}

export class BotCallModel implements BotCallView {
  @ApiProperty()
  id!: string;

  @ApiProperty({ type: 'integer' })
  account_id!: number;

  @ApiProperty({ type: 'integer', nullable: true })
  bot_webhook_id!: number | null;

  @ApiProperty({ enum: BOT_WEBHOOK_TYPES })
  type!: BotWebhookType;

  @ApiProperty()
  integration_name!: string;

  @ApiProperty({ type: 'string', nullable: true })
  url!: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'As sent, with the task-push sign redacted.' })
  request_body!: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  response_status!: number | null;

  @ApiProperty({ type: 'string', nullable: true })
  response_body!: string | null;

  @ApiProperty({ description: 'The validated answer handed to the bot (any JSON), or null.' })
  answer!: unknown;

  @ApiProperty({ enum: BOT_CALL_OUTCOMES })
  outcome!: BotCallOutcome;

  @ApiProperty({ type: 'string', nullable: true })
  error!: string | null;

  @ApiProperty({ type: 'integer' })
  duration_ms!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

export class BotCallPageModel extends CursorPageModel<BotCallView>(BotCallModel) {}

export const ApiCreateBotWebhook = (): MethodDecorator =>
  applyDecorators(
    ApiJsonBodyErrors(),
    ApiAccountOperation(
      ApiAdminOperation('Add a bot webhook to an account', 201, BotWebhookModel, 'The key signs the calls and is never shown again.'),
      [409, 'The account already has a webhook of this type with this name.'],
      [422, BODY_FIELD_PROBLEM],
    ),
  );

export const ApiListBotWebhooks = (): MethodDecorator => ApiAccountOperation(ApiAdminOperation("An account's bot webhooks", 200, BotWebhookListModel));

export const ApiRemoveBotWebhook = (): MethodDecorator =>
  applyDecorators(
    ApiIdParam(),
    ApiIdParam('bot_id'),
    ApiAdminOperation('Remove a bot webhook', 204, null),
    ApiErrorResponses([404, 'The account has no such bot webhook.'], [400, ID_PARAM_PROBLEM]),
  );

export const ApiListBotCalls = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('The bot call log', 200, BotCallPageModel, 'Newest first, in cursor pages.'), ApiErrorResponses([400, 'A query parameter is malformed or out of range; `details` names it.']));
