import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { AdminTokenGuard } from '@app/runtime';
import { IdParamPipe } from '../id-param.pipe';
import { CreateAccountDto } from './account.dto';
import { ListAccountsQueryDto } from './account-list.dto';
import { type AccountView, AccountsService, type CreatedAccount } from './accounts.service';

@Controller('admin/v1/accounts')
@UseGuards(AdminTokenGuard)
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Post()
  @HttpCode(201)
  create(@Body() body: CreateAccountDto): Promise<CreatedAccount> {
    return this.accounts.create(body);
  }

  @Get()
  list(@Query() query: ListAccountsQueryDto): Promise<{ items: AccountView[]; next_cursor: string | null }> {
    return this.accounts.list(query);
  }

  @Get(':id')
  view(@Param('id', IdParamPipe) id: number): Promise<AccountView> {
    return this.accounts.view(id);
  }

  @Post(':id/endpoint/enable')
  @HttpCode(200)
  enableEndpoint(@Param('id', IdParamPipe) id: number): Promise<AccountView> {
    return this.accounts.enableEndpoint(id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  rotate(@Param('id', IdParamPipe) id: number): Promise<{ signing_secret: string; previous_secret_expires_at: string }> {
    return this.accounts.rotateSecret(id);
  }
}
