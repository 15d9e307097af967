import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { AdminTokenGuard } from '@app/runtime';
import { IdParamPipe } from '../id-param.pipe';
import type { BotCallView, BotWebhookView, Page } from '@app/payloads';
import { AdminBotWebhooksService } from './admin-bot-webhooks.service';
import { CreateBotWebhookDto, ListBotCallsQueryDto } from './bot-webhook.dto';
import { ApiCreateBotWebhook, ApiListBotCalls, ApiListBotWebhooks, ApiRemoveBotWebhook } from './bot-webhooks.docs';
import { ApiAdminController } from '../admin.docs';

@ApiAdminController('Admin: bot webhooks and calls')
@Controller('admin/v1/accounts/:id/bot-webhooks')
@UseGuards(AdminTokenGuard)
export class AdminBotWebhooksController {
  constructor(private readonly botWebhooks: AdminBotWebhooksService) {}

  @ApiCreateBotWebhook()
  @Post()
  @HttpCode(201)
  create(@Param('id', IdParamPipe) accountId: number, @Body() body: CreateBotWebhookDto): Promise<BotWebhookView> {
    return this.botWebhooks.create(accountId, body);
  }

  @ApiListBotWebhooks()
  @Get()
  list(@Param('id', IdParamPipe) accountId: number): Promise<{ items: BotWebhookView[] }> {
    return this.botWebhooks.list(accountId);
  }

  @ApiRemoveBotWebhook()
  @Delete(':bot_id')
  @HttpCode(204)
  async remove(@Param('id', IdParamPipe) accountId: number, @Param('bot_id', IdParamPipe) botId: number): Promise<void> {
    await this.botWebhooks.remove(accountId, botId);
  }
}

@ApiAdminController('Admin: bot webhooks and calls')
@Controller('admin/v1/bot-calls')
@UseGuards(AdminTokenGuard)
export class AdminBotCallsController {
  constructor(private readonly botWebhooks: AdminBotWebhooksService) {}

  @ApiListBotCalls()
  @Get()
  list(@Query() query: ListBotCallsQueryDto): Promise<Page<BotCallView>> {
    return this.botWebhooks.listCalls(query);
  }
}
