import { Body, Controller, UseGuards } from '@nestjs/common';
import { IntersectionType } from '@nestjs/swagger';
import type { DeliveryOptions } from '@app/payloads';
import { DeliveryOptionsBody, DeliveryOptionsModel, SET_DELIVERY_OPTIONS_ERRORS } from '../destinations/delivery-options.docs';
import { DeliveryOptionsService } from '../destinations/delivery-options.service';
import { checkDeliveryOptions, describeProblems, EITHER_OPTION } from '../destinations/delivery-options.validation';
import { Caller, OpenApiAuthGuard, type OpenApiCaller } from './open-api-auth.guard';
import { authFailed, invalidParam, missingParamMessage, OpenApiCode } from './open-api-errors';
import { OpenApiJsonCall } from './open-api-call.decorator';
import { ApiOpenApiBody, ApiOpenApiOperation, ApiSignedOpenApi, OkAnswer } from './open-api.docs';

export type SetDeliveryOptionsResponse = { code: typeof OpenApiCode.ok; message: 'OK' } & DeliveryOptions;

class SetDeliveryOptionsAnswer extends IntersectionType(OkAnswer, DeliveryOptionsModel) {}

/**
 * `set_delivery_options` (CONTRACT §9), signed like every Open API call. Its own controller under the
 * same prefix and guards, so the operation stays apart from the seed's four.
 */
@ApiSignedOpenApi()
@Controller('open_api_v1')
@UseGuards(OpenApiAuthGuard)
export class SetDeliveryOptionsController {
  constructor(private readonly deliveryOptions: DeliveryOptionsService) {}

  @ApiOpenApiOperation(
    'set_delivery_options',
    'Set the delivery options (ordering, max_per_second)',
    SetDeliveryOptionsAnswer,
    'Fields not sent keep their value; at least one must be sent, and no other key. The answer has both options after the change; the workers apply them to the next call.',
  )
  @ApiOpenApiBody(DeliveryOptionsBody, SET_DELIVERY_OPTIONS_ERRORS)
  @OpenApiJsonCall('set_delivery_options')
  async setDeliveryOptions(@Caller() caller: OpenApiCaller, @Body() body: unknown): Promise<SetDeliveryOptionsResponse> {
    const check = checkDeliveryOptions(body);
    if (check.changes === null) throw invalidParam(check.nothingSent ? missingParamMessage(EITHER_OPTION) : describeProblems(check.problems));
    const options = await this.deliveryOptions.change(caller.accountId, check.changes);
    // Authenticated a moment ago but deleted since: the answer the next call will get.
    if (!options) throw authFailed('unknown email or wrong sign');
    return { code: OpenApiCode.ok, message: 'OK', ...options };
  }
}
