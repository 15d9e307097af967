import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { ApiBody, ApiParam } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DestinationView } from '@app/payloads';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { ApiErrorResponses } from '@app/runtime/docs';
import { ApiAdminController, ApiAdminOperation, ApiIdParam, ID_PARAM_PROBLEM } from '../admin.docs';
import { IdParamPipe } from '../id-param.pipe';
import { requireAccount } from '../require-account';
import { adminAnswered } from './admin-destination-errors';
import { ADMIN_DESTINATION_PROBLEM, DestinationBody, DestinationList, DestinationModel, DestinationPutBody, DESTINATIONS_DESCRIPTION } from '../../destinations/destinations.docs';
import { DestinationsService } from '../../destinations/destinations.service';
import { Audit } from '../../audit/audit.decorator';

const UNKNOWN: [404, string] = [404, 'The account does not exist, or has no destination with this id.'];
const ApiDestinationId = (): MethodDecorator => ApiParam({ name: 'destination_id', description: 'A destination id (`dst_…`); `primary` for pause and resume.' });

/** Operators' (and the console's) door to an account's destinations (CONTRACT §11). */
@ApiAdminController('Admin: accounts')
@Controller('admin/v1/accounts/:id/destinations')
@UseGuards(AdminAccessGuard)
export class AdminDestinationsController {
  constructor(
    private readonly destinations: DestinationsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  @ApiAdminOperation("List an account's destinations", 200, DestinationList, DESTINATIONS_DESCRIPTION)
  @ApiIdParam()
  @ApiErrorResponses([400, ID_PARAM_PROBLEM], [404, 'The account does not exist.'])
  @Permission('read')
  @Get()
  async list(@Param('id', IdParamPipe) accountId: number): Promise<{ items: DestinationView[] }> {
    await requireAccount(this.dataSource, accountId);
    return { items: await this.destinations.list(accountId) };
  }

  @ApiAdminOperation('Add a destination', 201, DestinationModel, 'The answer carries its signing_secret, shown this once.')
  @ApiIdParam()
  @ApiBody({ type: DestinationBody })
  @ApiErrorResponses([400, ID_PARAM_PROBLEM], [404, 'The account does not exist.'], [422, ADMIN_DESTINATION_PROBLEM])
  @Permission('administer')
  @Audit('destination.create')
  @Post()
  @HttpCode(201)
  async create(@Param('id', IdParamPipe) accountId: number, @Body() body: unknown): Promise<DestinationView> {
    await requireAccount(this.dataSource, accountId);
    return adminAnswered(() => this.destinations.create(accountId, body));
  }

  @ApiAdminOperation('Change a destination', 200, DestinationModel, 'Fields not sent keep their value.')
  @ApiIdParam()
  @ApiDestinationId()
  @ApiBody({ type: DestinationPutBody })
  @ApiErrorResponses([400, ID_PARAM_PROBLEM], UNKNOWN, [422, ADMIN_DESTINATION_PROBLEM])
  @Permission('administer')
  @Audit('destination.update')
  @Put(':destination_id')
  async update(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string, @Body() body: unknown): Promise<DestinationView> {
    await requireAccount(this.dataSource, accountId);
    return adminAnswered(() => this.destinations.update(accountId, id, body));
  }

  @ApiAdminOperation('Delete a destination', 204, null, "Its pending deliveries end failed ('destination deleted').")
  @ApiIdParam()
  @ApiDestinationId()
  @ApiErrorResponses([400, ID_PARAM_PROBLEM], UNKNOWN, [422, 'The primary cannot be deleted.'])
  @Permission('administer')
  @Audit('destination.delete')
  @Delete(':destination_id')
  @HttpCode(204)
  async remove(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string): Promise<void> {
    await requireAccount(this.dataSource, accountId);
    await adminAnswered(() => this.destinations.remove(accountId, id));
  }

  @ApiAdminOperation('Pause a destination', 200, DestinationModel, 'Deliveries wait without spending attempts until resume.')
  @ApiIdParam()
  @ApiDestinationId()
  @ApiErrorResponses([400, ID_PARAM_PROBLEM], UNKNOWN)
  @Permission('operate')
  @Audit('destination.pause')
  @Post(':destination_id/pause')
  @HttpCode(200)
  async pause(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string): Promise<DestinationView> {
    await requireAccount(this.dataSource, accountId);
    return adminAnswered(() => this.destinations.pause(accountId, id));
  }

  @ApiAdminOperation('Resume a destination', 200, DestinationModel, 'What waited goes in the order ingest accepted it.')
  @ApiIdParam()
  @ApiDestinationId()
  @ApiErrorResponses([400, ID_PARAM_PROBLEM], UNKNOWN)
  @Permission('operate')
  @Audit('destination.resume')
  @Post(':destination_id/resume')
  @HttpCode(200)
  async resume(@Param('id', IdParamPipe) accountId: number, @Param('destination_id') id: string): Promise<DestinationView> {
    await requireAccount(this.dataSource, accountId);
    return adminAnswered(() => this.destinations.resume(accountId, id));
  }
}
