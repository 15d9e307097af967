import { Body, Controller, Get, UseGuards } from '@nestjs/common';
import { Caller, OpenApiAuthGuard, type OpenApiCaller } from './open-api-auth.guard';
import { OpenApiJsonCall } from './open-api-call.decorator';
import {
  ApiOpenApiBody,
  ApiOpenApiOperation,
  ApiSignedOpenApi,
  PushSettingsAnswer,
  SET_PERMISSIONS_ERRORS,
  SET_PUSH_CONTENT_TYPE_ERRORS,
  SET_URL_ERRORS,
  SetPermissionsAnswer,
  SetPermissionsBody,
  SetPushContentTypeAnswer,
  SetPushContentTypeBody,
  SetUrlAnswer,
  SetUrlBody,
} from './open-api.docs';
import {
  OpenApiService,
  type PushSettingsResponse,
  type SetPermissionsResponse,
  type SetPushContentTypeResponse,
  type SetUrlResponse,
} from './open-api.service';

/**
 * The signed configuration operations (CONTRACT §2). Bodies are taken as plain values (`unknown`, so
 * the global ValidationPipe leaves them alone) and checked in the service with the seed's texts.
 * Class guards run before method guards: authentication first, then the JSON content type (415).
 */
@ApiSignedOpenApi()
@Controller('open_api_v1')
@UseGuards(OpenApiAuthGuard)
export class OpenApiController {
  constructor(private readonly openApi: OpenApiService) {}

  @ApiOpenApiOperation('set_url', 'Set the callback URL (push_url)', SetUrlAnswer, 'Re-enables a disabled endpoint. Callbacks go to this URL from now on.')
  @ApiOpenApiBody(SetUrlBody, SET_URL_ERRORS)
  @OpenApiJsonCall('set_url')
  setUrl(@Caller() caller: OpenApiCaller, @Body() body: unknown): Promise<SetUrlResponse> {
    return this.openApi.setUrl(caller.accountId, body);
  }

  @ApiOpenApiOperation('set_push_content_type', 'Set the callback content type', SetPushContentTypeAnswer)
  @ApiOpenApiBody(SetPushContentTypeBody, SET_PUSH_CONTENT_TYPE_ERRORS)
  @OpenApiJsonCall('set_push_content_type')
  setPushContentType(@Caller() caller: OpenApiCaller, @Body() body: unknown): Promise<SetPushContentTypeResponse> {
    return this.openApi.setPushContentType(caller.accountId, body);
  }

  @ApiOpenApiOperation('set_permissions', 'Choose which events are delivered', SetPermissionsAnswer, 'Every key is false until set; keys not sent keep their value.')
  @ApiOpenApiBody(SetPermissionsBody, SET_PERMISSIONS_ERRORS)
  @OpenApiJsonCall('set_permissions')
  setPermissions(@Caller() caller: OpenApiCaller, @Body() body: unknown): Promise<SetPermissionsResponse> {
    return this.openApi.setPermissions(caller.accountId, body);
  }

  @ApiOpenApiOperation('push_settings', 'Read the callback settings', PushSettingsAnswer, 'An extension of the seed, signed the same way.')
  @Get('push_settings')
  pushSettings(@Caller() caller: OpenApiCaller): Promise<PushSettingsResponse> {
    return this.openApi.pushSettings(caller.accountId);
  }
}
