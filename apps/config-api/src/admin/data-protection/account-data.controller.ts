import { Body, Controller, Delete, HttpCode, Param, Put, UseGuards } from '@nestjs/common';
import type { AccountView } from '@app/payloads';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { ApiAdminController } from '../admin.docs';
import { IdParamPipe } from '../id-param.pipe';
import { AccountDeletionService, type AccountDeletionStarted } from './account-deletion.service';
import { ApiDeleteAccount, ApiSetRedaction } from './data-protection.docs';
import { RedactionDto } from './data-protection.dto';
import { RedactionService } from './redaction.service';
import { Audit } from '../../audit/audit.decorator';

/** CONTRACT §12 on an account: redaction at rest and offboarding. */
@ApiAdminController('Admin: accounts')
@Controller('admin/v1/accounts')
@UseGuards(AdminAccessGuard)
export class AccountDataController {
  constructor(
    private readonly deletion: AccountDeletionService,
    private readonly redaction: RedactionService,
  ) {}

  @ApiSetRedaction()
  @Permission('administer')
  @Audit('redaction.update')
  @Put(':id/redaction')
  setRedaction(@Param('id', IdParamPipe) id: number, @Body() body: RedactionDto): Promise<AccountView> {
    return this.redaction.set(id, body.fields);
  }

  @ApiDeleteAccount()
  @Permission('administer')
  @Audit('account.delete')
  @Delete(':id')
  @HttpCode(202)
  delete(@Param('id', IdParamPipe) id: number): Promise<AccountDeletionStarted> {
    return this.deletion.delete(id);
  }
}
