import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { IdParamPipe } from '../id-param.pipe';
import type { BotCallView, BotWebhookView, Page } from '@app/payloads';
import { AdminBotWebhooksService } from './admin-bot-webhooks.service';
import { CreateBotWebhookDto, ListBotCallsQueryDto } from './bot-webhook.dto';
import { ApiCreateBotWebhook, ApiListBotCalls, ApiListBotWebhooks, ApiRemoveBotWebhook } from './bot-webhooks.docs';
import { ApiAdminController } from '../admin.docs';
import { Audit } from '../../audit/audit.decorator';

@ApiAdminController('Admin: bot webhooks and calls')
@Controller('admin/v1/accounts/:id/bot-webhooks')
@UseGuards(AdminAccessGuard)
export class AdminBotWebhooksController {
  constructor(private readonly botWebhooks: AdminBotWebhooksService) {}

  @ApiCreateBotWebhook()
  @Permission('administer')
  @Audit('bot_webhook.create')
  @Post()
  @HttpCode(201)
  create(@Param('id', IdParamPipe) accountId: number, @Body() body: CreateBotWebhookDto): Promise<BotWebhookView> {
    return this.botWebhooks.create(accountId, body);
  }

  @ApiListBotWebhooks()
  @Permission('read')
  @Get()
  list(@Param('id', IdParamPipe) accountId: number): Promise<{ items: BotWebhookView[] }> {
    return this.botWebhooks.list(accountId);
  }

  @ApiRemoveBotWebhook()
  @Permission('administer')
  @Audit('bot_webhook.delete')
  @Delete(':bot_id')
  @HttpCode(204)
  async remove(@Param('id', IdParamPipe) accountId: number, @Param('bot_id', IdParamPipe) botId: number): Promise<void> {
    await this.botWebhooks.remove(accountId, botId);
  }
}

@ApiAdminController('Admin: bot webhooks and calls')
@Controller('admin/v1/bot-calls')
@UseGuards(AdminAccessGuard)
export class AdminBotCallsController {
  constructor(private readonly botWebhooks: AdminBotWebhooksService) {}

  @ApiListBotCalls()
  @Permission('read')
  @Get()
  list(@Query() query: ListBotCallsQueryDto): Promise<Page<BotCallView>> {
    return this.botWebhooks.listCalls(query);
  }
}
