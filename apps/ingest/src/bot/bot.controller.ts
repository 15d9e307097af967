import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { IngestTokenGuard } from '@app/runtime';
import { BotCallService } from './bot-call.service';
import { MessageTriggerRequestDto, TaskPushRequestDto } from './bot-request.dto';
import { ApiBotController, ApiMessageTrigger, ApiTaskPush } from './bot.docs';

/** The platform's bot asks here; the answer comes from the account's webhook (CONTRACT §4, §6). */
@ApiBotController()
@Controller('v1/bot')
@UseGuards(IngestTokenGuard)
export class BotController {
  constructor(private readonly calls: BotCallService) {}

  @ApiMessageTrigger()
  @Post('message-trigger')
  @HttpCode(200)
  async messageTrigger(@Body() body: MessageTriggerRequestDto, @Res({ passthrough: true }) response: Response): Promise<unknown> {
    const reply = await this.calls.messageTrigger(body);
    response.status(reply.status);
    return reply.body;
  }

  @ApiTaskPush()
  @Post('task-push')
  @HttpCode(200)
  async taskPush(@Body() body: TaskPushRequestDto, @Res({ passthrough: true }) response: Response): Promise<unknown> {
    const reply = await this.calls.taskPush(body);
    response.status(reply.status);
    return reply.body;
  }
}
