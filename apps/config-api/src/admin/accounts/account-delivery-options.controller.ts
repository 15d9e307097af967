import { Body, Controller, Param, Put, UseGuards } from '@nestjs/common';
import type { AccountView } from '@app/payloads';
import { ApiError, validationFailed } from '@app/runtime';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { DeliveryOptionsService } from '../../destinations/delivery-options.service';
import { checkDeliveryOptions } from '../../destinations/delivery-options.validation';
import { ApiAdminController } from '../admin.docs';
import { IdParamPipe } from '../id-param.pipe';
import { ApiSetDeliveryOptions } from './accounts.docs';
import { AccountsService } from './accounts.service';
import { Audit } from '../../audit/audit.decorator';

/**
 * `PUT /admin/v1/accounts/:id/delivery-options` (CONTRACT §9): the Open API's check and store, with the
 * admin API's error shape (422 naming each field, 404 for an unknown account).
 */
@ApiAdminController('Admin: accounts')
@Controller('admin/v1/accounts')
@UseGuards(AdminAccessGuard)
export class AccountDeliveryOptionsController {
  constructor(
    private readonly deliveryOptions: DeliveryOptionsService,
    private readonly accounts: AccountsService,
  ) {}

  @ApiSetDeliveryOptions()
  @Permission('administer')
  @Audit('delivery_options.update')
  @Put(':id/delivery-options')
  async set(@Param('id', IdParamPipe) id: number, @Body() body: unknown): Promise<AccountView> {
    const check = checkDeliveryOptions(body);
    if (check.changes === null) throw validationFailed(check.problems);
    const options = await this.deliveryOptions.change(id, check.changes);
    if (!options) throw new ApiError(404, 'not_found', `account ${id} does not exist`);
    return this.accounts.view(id);
  }
}
