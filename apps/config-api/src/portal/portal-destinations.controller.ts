import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { ApiBody, ApiParam } from '@nestjs/swagger';
import type { DestinationView } from '@app/payloads';
import { PortalAccount, PortalSessionGuard } from '../portal-access/portal-session.guard';
import { ApiPortalErrors } from './portal.docs';
import { portalAnswered } from './portal-destination-errors';
import { DestinationBody, DestinationList, DestinationModel, DestinationPutBody, DESTINATIONS_DESCRIPTION } from '../destinations/destinations.docs';
import { DestinationsService } from '../destinations/destinations.service';
import { Audit } from '../audit/audit.decorator';

const BAD_BODY: [400, string] = [400, 'A field is wrong (the Open API rule and text, code 2000, in `details` naming each field), or the body is not valid JSON.'];
const UNKNOWN: [404, string] = [404, "No destination of this account has this id (another account's id answers the same)."];
const ApiDestinationId = (): MethodDecorator => ApiParam({ name: 'id', description: 'A destination id (`dst_…`); `primary` for pause and resume.' });

/** Pause and resume: the same switch on one destination, recorded as `destination.<verb>`. */
const DestinationSwitch = (verb: 'pause' | 'resume', summary: string, description: string): MethodDecorator =>
  applyDecorators(
    ApiPortalErrors(summary, 200, DestinationModel, description, { errors: [UNKNOWN] }),
    ApiDestinationId(),
    Audit(`destination.${verb}`),
    Post(`:id/${verb}`),
    HttpCode(200),
  );

/** The session account's destinations (CONTRACT §10, §11): the Open API's rules, the admin error shape. */
@Controller('portal/v1/destinations')
@UseGuards(PortalSessionGuard)
export class DestinationsPortalController {
  constructor(private readonly destinations: DestinationsService) {}

  @ApiPortalErrors('List the destinations', 200, DestinationList, DESTINATIONS_DESCRIPTION)
  @Get()
  async list(@PortalAccount() accountId: number): Promise<{ items: DestinationView[] }> {
    return { items: await this.destinations.list(accountId) };
  }

  @ApiPortalErrors('Add a destination', 201, DestinationModel, 'The answer carries its signing_secret, shown this once.', { errors: [BAD_BODY, 413] })
  @ApiBody({ type: DestinationBody })
  @Audit('destination.create')
  @Post()
  @HttpCode(201)
  create(@PortalAccount() accountId: number, @Body() body: unknown): Promise<DestinationView> {
    return portalAnswered(() => this.destinations.create(accountId, body));
  }

  @ApiPortalErrors('Change a destination', 200, DestinationModel, 'Fields not sent keep their value.', { errors: [BAD_BODY, UNKNOWN, 413] })
  @ApiDestinationId()
  @ApiBody({ type: DestinationPutBody })
  @Audit('destination.update')
  @Put(':id')
  update(@PortalAccount() accountId: number, @Param('id') id: string, @Body() body: unknown): Promise<DestinationView> {
    return portalAnswered(() => this.destinations.update(accountId, id, body));
  }

  @ApiPortalErrors('Delete a destination', 204, null, "Its pending deliveries end failed ('destination deleted').", { errors: [UNKNOWN] })
  @ApiDestinationId()
  @Audit('destination.delete')
  @Delete(':id')
  @HttpCode(204)
  async remove(@PortalAccount() accountId: number, @Param('id') id: string): Promise<void> {
    await portalAnswered(() => this.destinations.remove(accountId, id));
  }

  @DestinationSwitch('pause', 'Pause a destination', 'Deliveries wait without spending attempts until resume.')
  pause(@PortalAccount() accountId: number, @Param('id') id: string): Promise<DestinationView> {
    return portalAnswered(() => this.destinations.pause(accountId, id));
  }

  @DestinationSwitch('resume', 'Resume a destination', 'What waited goes in the order ingest accepted it.')
  resume(@PortalAccount() accountId: number, @Param('id') id: string): Promise<DestinationView> {
    return portalAnswered(() => this.destinations.resume(accountId, id));
  }
}
