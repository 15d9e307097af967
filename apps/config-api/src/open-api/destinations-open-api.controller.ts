import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post, Put, UseGuards } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import type { DestinationView } from '@app/payloads';
import { OpenApiError } from '@app/runtime';
import { Caller, OpenApiAuthGuard, type OpenApiCaller } from './open-api-auth.guard';
import { invalidParam, OpenApiCode } from './open-api-errors';
import { JsonBodyGuard } from './json-body.guard';
import { ApiOpenApiBody, ApiOpenApiOperation, ApiSignedOpenApi, errorResponse, OkAnswer, openApiError } from './open-api.docs';
import { DESTINATION_ERRORS, DESTINATION_PUT_ERRORS, DestinationBody, DestinationPutBody, DESTINATIONS_DESCRIPTION } from '../destinations/destinations.docs';
import { DestinationAnswer, DestinationListAnswer } from './destinations-open-api.docs';
import { DestinationNotFoundError, DestinationProblemError, DestinationsService } from '../destinations/destinations.service';
import { Audit } from '../audit/audit.decorator';

type Ok = { code: typeof OpenApiCode.ok; message: 'OK' };
export type DestinationAnswerBody = Ok & { destination: DestinationView };
export type DestinationListBody = Ok & { items: DestinationView[] };

const OK: Ok = { code: OpenApiCode.ok, message: 'OK' };

/** The service's refusals in the Open API's words: 2000 naming the field, 404 (code 2000) for an unknown id. */
async function answered<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DestinationProblemError) throw invalidParam(error.message);
    if (error instanceof DestinationNotFoundError) throw new OpenApiError(404, OpenApiCode.invalidParam, `id: ${error.message}`);
    throw error;
  }
}

const ApiDestinationId = (primary: boolean): MethodDecorator =>
  ApiParam({ name: 'id', description: primary ? 'A destination id, or `primary` (the push_url).' : 'A destination id (`dst_…`).', example: 'dst_5f0c1e0a9b7d4c3e8a2b6d1f' });

const ApiUnknownDestination = (): MethodDecorator =>
  errorResponse(404, 'No destination of this account has this id (code 2000).', { unknown: openApiError(OpenApiCode.invalidParam, 'Unknown error', DESTINATION_PUT_ERRORS.unknown) });

/** Pause and resume: the same switch on one destination (or the primary), `<verb>_destination`, recorded as `destination.<verb>`. */
const DestinationSwitch = (verb: 'pause' | 'resume', summary: string, description: string): MethodDecorator =>
  applyDecorators(
    ApiOpenApiOperation(`${verb}_destination`, summary, DestinationAnswer, description),
    ApiDestinationId(true),
    ApiUnknownDestination(),
    Audit(`destination.${verb}`),
    Post(`:id/${verb}`),
    HttpCode(200),
  );

/** Destinations (CONTRACT §11), signed like every Open API call. */
@ApiSignedOpenApi()
@Controller('open_api_v1/destinations')
@UseGuards(OpenApiAuthGuard)
export class DestinationsOpenApiController {
  constructor(private readonly destinations: DestinationsService) {}

  @ApiOpenApiOperation('list_destinations', 'List the destinations', DestinationListAnswer, DESTINATIONS_DESCRIPTION)
  @Get()
  async list(@Caller() caller: OpenApiCaller): Promise<DestinationListBody> {
    return { ...OK, items: await this.destinations.list(caller.accountId) };
  }

  @ApiOpenApiOperation('create_destination', 'Add a destination', DestinationAnswer, `The answer carries its own signing_secret (whsec_…), shown this once. The 21st is refused (2000). ${DESTINATIONS_DESCRIPTION}`)
  @ApiOpenApiBody(DestinationBody, DESTINATION_ERRORS)
  @Audit('destination.create')
  @Post()
  @HttpCode(200)
  @UseGuards(JsonBodyGuard)
  async create(@Caller() caller: OpenApiCaller, @Body() body: unknown): Promise<DestinationAnswerBody> {
    return { ...OK, destination: await answered(() => this.destinations.create(caller.accountId, body)) };
  }

  @ApiOpenApiOperation('update_destination', 'Change a destination', DestinationAnswer, 'Fields not sent keep their value; a new target enables a disabled destination again. The primary is changed with set_url and the other settings calls.')
  @ApiDestinationId(false)
  @ApiOpenApiBody(DestinationPutBody, DESTINATION_PUT_ERRORS)
  @ApiUnknownDestination()
  @Audit('destination.update')
  @Put(':id')
  @UseGuards(JsonBodyGuard)
  async update(@Caller() caller: OpenApiCaller, @Param('id') id: string, @Body() body: unknown): Promise<DestinationAnswerBody> {
    return { ...OK, destination: await answered(() => this.destinations.update(caller.accountId, id, body)) };
  }

  @ApiOpenApiOperation('delete_destination', 'Delete a destination', OkAnswer, "From then on nothing more is sent to it: its pending deliveries end failed ('destination deleted').")
  @ApiDestinationId(false)
  @ApiUnknownDestination()
  @Audit('destination.delete')
  @Delete(':id')
  async remove(@Caller() caller: OpenApiCaller, @Param('id') id: string): Promise<Ok> {
    await answered(() => this.destinations.remove(caller.accountId, id));
    return OK;
  }

  @DestinationSwitch('pause', 'Pause a destination', 'Deliveries to it wait without spending attempts until resume. `primary` pauses the push_url.')
  async pause(@Caller() caller: OpenApiCaller, @Param('id') id: string): Promise<DestinationAnswerBody> {
    return { ...OK, destination: await answered(() => this.destinations.pause(caller.accountId, id)) };
  }

  @DestinationSwitch('resume', 'Resume a destination', 'What waited goes in the order ingest accepted it (and in subject order where ordering is subject).')
  async resume(@Caller() caller: OpenApiCaller, @Param('id') id: string): Promise<DestinationAnswerBody> {
    return { ...OK, destination: await answered(() => this.destinations.resume(caller.accountId, id)) };
  }
}
