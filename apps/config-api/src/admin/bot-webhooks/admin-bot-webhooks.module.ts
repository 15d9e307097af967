import { Module } from '@nestjs/common';

/** Bot webhook settings per account and the bot call log (placeholder module: filled in by its feature work). */
@Module({})
export class AdminBotWebhooksModule {}
