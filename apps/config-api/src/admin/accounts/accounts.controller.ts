import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { IdParamPipe } from '../id-param.pipe';
import { CreateAccountDto } from './account.dto';
import { ListAccountsQueryDto } from './account-list.dto';
import type { AccountView, CreatedAccount, Page, RotatedSecret, RotatedToken } from '@app/payloads';
import { AccountsService } from './accounts.service';
import { AccountCredentialsService } from './account-credentials.service';
import {
  ApiCreateAccount,
  ApiEnableEndpoint,
  ApiListAccounts,
  ApiRevokePreviousSecret,
  ApiRotateSecret,
  ApiRotateToken,
  ApiViewAccount,
} from './accounts.docs';
import { ApiAdminController } from '../admin.docs';
import { Audit } from '../../audit/audit.decorator';

@ApiAdminController('Admin: accounts')
@Controller('admin/v1/accounts')
@UseGuards(AdminAccessGuard)
export class AccountsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly credentials: AccountCredentialsService,
  ) {}

  @ApiCreateAccount()
  @Permission('administer')
  @Audit('account.create')
  @Post()
  @HttpCode(201)
  create(@Body() body: CreateAccountDto): Promise<CreatedAccount> {
    return this.accounts.create(body);
  }

  @ApiListAccounts()
  @Permission('read')
  @Get()
  list(@Query() query: ListAccountsQueryDto): Promise<Page<AccountView>> {
    return this.accounts.list(query);
  }

  @ApiViewAccount()
  @Permission('read')
  @Get(':id')
  view(@Param('id', IdParamPipe) id: number): Promise<AccountView> {
    return this.accounts.view(id);
  }

  @ApiEnableEndpoint()
  @Permission('operate')
  @Audit('endpoint.enable')
  @Post(':id/endpoint/enable')
  @HttpCode(200)
  enableEndpoint(@Param('id', IdParamPipe) id: number): Promise<AccountView> {
    return this.accounts.enableEndpoint(id);
  }

  @ApiRotateSecret()
  @Permission('administer')
  @Audit('secret.rotate')
  @Post(':id/rotate-secret')
  @HttpCode(200)
  rotate(@Param('id', IdParamPipe) id: number): Promise<RotatedSecret> {
    return this.credentials.rotateSecret(id);
  }

  @ApiRevokePreviousSecret()
  @Permission('administer')
  @Audit('secret.revoke_previous')
  @Post(':id/revoke-previous-secret')
  @HttpCode(200)
  async revokePreviousSecret(@Param('id', IdParamPipe) id: number): Promise<AccountView> {
    await this.credentials.revokePreviousSecret(id);
    return this.accounts.view(id);
  }

  @ApiRotateToken()
  @Permission('administer')
  @Audit('token.rotate')
  @Post(':id/rotate-token')
  @HttpCode(200)
  rotateToken(@Param('id', IdParamPipe) id: number): Promise<RotatedToken> {
    return this.credentials.rotateToken(id);
  }
}
