import { Module } from '@nestjs/common';

/** POST /v1/bot/message-trigger and /v1/bot/task-push (placeholder module: filled in by its feature work). */
@Module({})
export class BotModule {}
