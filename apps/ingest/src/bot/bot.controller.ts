import { applyDecorators, Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { IngestTokenGuard } from '@app/runtime';
import { type BotReply, BotCallService } from './bot-call.service';
import { MessageTriggerRequestDto, TaskPushRequestDto } from './bot-request.dto';
import { ApiBotController, ApiMessageTrigger, ApiTaskPush } from './bot.docs';

/** A bot call's route: 200 unless the webhook's reply says otherwise (see `answer`). */
function BotCallRoute(path: string, docs: MethodDecorator): MethodDecorator {
  return applyDecorators(docs, Post(path), HttpCode(200));
}

/** The reply's status goes on the response; its body is what the bot reads. */
function answer(response: Response, reply: BotReply): unknown {
  response.status(reply.status);
  return reply.body;
}

/** The platform's bot asks here; the answer comes from the account's webhook (CONTRACT §4, §6). */
@ApiBotController()
@Controller('v1/bot')
@UseGuards(IngestTokenGuard)
export class BotController {
  constructor(private readonly calls: BotCallService) {}

  @BotCallRoute('message-trigger', ApiMessageTrigger())
  async messageTrigger(@Body() body: MessageTriggerRequestDto, @Res({ passthrough: true }) response: Response): Promise<unknown> {
    return answer(response, await this.calls.messageTrigger(body));
  }

  @BotCallRoute('task-push', ApiTaskPush())
  async taskPush(@Body() body: TaskPushRequestDto, @Res({ passthrough: true }) response: Response): Promise<unknown> {
    return answer(response, await this.calls.taskPush(body));
  }
}
