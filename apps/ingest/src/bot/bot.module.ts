import { Module } from '@nestjs/common';
import { BotCallRecorder } from './bot-call.recorder';
import { BOT_CLOCK, BotCallService, systemClock } from './bot-call.service';
import { BotHttpClientLifecycle, botHttpClientProvider, botOriginLimiterProvider } from './bot-http.client';
import { BotController } from './bot.controller';
import { BotWebhookDirectory } from './bot-webhook.directory';

/** POST /v1/bot/message-trigger and /v1/bot/task-push: synchronous, signed calls to API users' bot webhooks. */
@Module({
  controllers: [BotController],
  providers: [
    BotCallService,
    BotCallRecorder,
    BotWebhookDirectory,
    botHttpClientProvider,
    botOriginLimiterProvider,
    BotHttpClientLifecycle,
    { provide: BOT_CLOCK, useValue: systemClock },
  ],
})
export class BotModule {}
