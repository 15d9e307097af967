import { Module } from '@nestjs/common';
import { AdminBotCallsController, AdminBotWebhooksController } from './admin-bot-webhooks.controller';
import { AdminBotWebhooksService } from './admin-bot-webhooks.service';

/** Bot webhook settings per account (`/admin/v1/accounts/:id/bot-webhooks`) and the bot call log (`/admin/v1/bot-calls`). */
@Module({ controllers: [AdminBotWebhooksController, AdminBotCallsController], providers: [AdminBotWebhooksService] })
export class AdminBotWebhooksModule {}
