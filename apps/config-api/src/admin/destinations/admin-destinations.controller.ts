import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { ApiBody, ApiParam } from '@nestjs/swagger';
import type { DestinationView } from '@app/payloads';
import { Sql } from '@app/persistence';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { ApiErrorResponses, type ErrorResponseSpec } from '@app/runtime/docs';
import { ApiAccountOperation, ApiAdminController, ApiAdminOperation, ApiIdParam, ID_PARAM_PROBLEM } from '../admin.docs';
import { IdParamPipe } from '../id-param.pipe';
import { requireAccount } from '../require-account';
import { adminAnswered } from './admin-destination-errors';
import { ADMIN_DESTINATION_PROBLEM, DestinationBody, DestinationList, DestinationModel, DestinationPutBody, DESTINATIONS_DESCRIPTION } from '../../destinations/destinations.docs';
import { DestinationsService } from '../../destinations/destinations.service';
import { Audit } from '../../audit/audit.decorator';

/** A route on one destination of the account: both path ids, and 404 for either unknown. */
const ApiOnDestination = (operation: MethodDecorator, ...errors: ErrorResponseSpec[]): MethodDecorator =>
  applyDecorators(
    ApiIdParam(),
    ApiParam({ name: 'destination_id', description: 'A destination id (`dst_…`); `primary` for pause and resume.' }),
    operation,
    ApiErrorResponses([400, ID_PARAM_PROBLEM], [404, 'The account does not exist, or has no destination with this id.'], ...errors),
  );

/** Pause and resume: the same operator's switch on one destination, recorded as `destination.<verb>`. */
const DestinationSwitch = (verb: 'pause' | 'resume', summary: string, description: string): MethodDecorator =>
  applyDecorators(
    ApiOnDestination(ApiAdminOperation(summary, 200, DestinationModel, description)),
    Permission('operate'),
    Audit(`destination.${verb}`),
    Post(`:destination_id/${verb}`),
    HttpCode(200),
  );

/** Operators' (and the console's) door to an account's destinations (CONTRACT §11). */
@ApiAdminController('Admin: accounts')
@Controller('admin/v1/accounts/:id/destinations')
@UseGuards(AdminAccessGuard)
export class AdminDestinationsController {
  constructor(
    private readonly destinations: DestinationsService,
    private readonly sql: Sql,
  ) {}

  @ApiAccountOperation(ApiAdminOperation("List an account's destinations", 200, DestinationList, DESTINATIONS_DESCRIPTION))
  @Permission('read')
  @Get()
  async list(@Param('id', IdParamPipe) accountId: number): Promise<{ items: DestinationView[] }> {
    await requireAccount(this.sql, accountId);
    return { items: await this.destinations.list(accountId) };
  }

  @ApiAccountOperation(ApiAdminOperation('Add a destination', 201, DestinationModel, 'The answer carries its signing_secret, shown this once.'), [422, ADMIN_DESTINATION_PROBLEM])
  @ApiBody({ type: DestinationBody })
  @Permission('administer')
  @Audit('destination.create')
  @Post()
  @HttpCode(201)
  create(@Param('id', IdParamPipe) accountId: number, @Body() body: unknown): Promise<DestinationView> {
    return this.answered(accountId, () => this.destinations.create(accountId, body));
  }

  @ApiOnDestination(ApiAdminOperation('Change a destination', 200, DestinationModel, 'Fields not sent keep their value.'), [422, ADMIN_DESTINATION_PROBLEM])
  @ApiBody({ type: DestinationPutBody })
  @Permission('administer')
  @Audit('destination.update')
  @Put(':destination_id')
  update(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string, @Body() body: unknown): Promise<DestinationView> {
    return this.answered(accountId, () => this.destinations.update(accountId, id, body));
  }

  @ApiOnDestination(ApiAdminOperation('Delete a destination', 204, null, "Its pending deliveries end failed ('destination deleted')."), [422, 'The primary cannot be deleted.'])
  @Permission('administer')
  @Audit('destination.delete')
  @Delete(':destination_id')
  @HttpCode(204)
  async remove(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string): Promise<void> {
    await this.answered(accountId, () => this.destinations.remove(accountId, id));
  }

  @DestinationSwitch('pause', 'Pause a destination', 'Deliveries wait without spending attempts until resume.')
  pause(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string): Promise<DestinationView> {
    return this.answered(accountId, () => this.destinations.pause(accountId, id));
  }

  @DestinationSwitch('resume', 'Resume a destination', 'What waited goes in the order ingest accepted it.')
  resume(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string): Promise<DestinationView> {
    return this.answered(accountId, () => this.destinations.resume(accountId, id));
  }

  /** 404 for an unknown account before the service is asked, then its refusals in the admin API's words. */
  private async answered<T>(accountId: number, work: () => Promise<T>): Promise<T> {
    await requireAccount(this.sql, accountId);
    return adminAnswered(work);
  }
}
