import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiProperty } from '@nestjs/swagger';
import type { AccountView, BreakerState, CreatedAccount, DestinationView, EndpointLane, RotatedSecret, RotatedToken } from '@app/payloads';
import { DestinationModel } from '../../destinations/destinations.docs';
import { ApiErrorResponses, ApiJsonBodyErrors } from '@app/runtime/docs';
import { WithPushSettings } from '../../open-api/open-api.docs';
import { ADMIN_DELIVERY_OPTIONS_PROBLEM, DeliveryOptionsBody } from '../../destinations/delivery-options.docs';
import { ApiAccountOperation, ApiAdminOperation, CursorPageModel, EndpointStateModel, NEXT_PAGE_CURSOR } from '../admin.docs';

/* Documentation of /admin/v1/accounts (CONTRACT §3). */

/** What both the creation answer and the account view start with. */
class AccountIdentityModel implements Pick<AccountView, 'id' | 'email' | 'name'> {
  @ApiProperty({ type: 'integer', example: 42 })
  id!: number;

  @ApiProperty({ example: 'admin@example.com' })
  email!: string;

  @ApiProperty({ type: 'string', nullable: true })
  name!: string | null;
}

export class CreatedAccountModel extends AccountIdentityModel implements CreatedAccount {
  @ApiProperty({ description: 'Signs the Open API calls. Shown only here, once.' })
  open_api_token!: string;

  @ApiProperty({ description: '`whsec_<base64 of 24+ random bytes>`: the key of the callbacks\' webhook-signature. Shown only here, once.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  signing_secret!: string;
}

class EndpointLaneModel implements EndpointLane {
  @ApiProperty({ type: 'integer', description: 'Events of this account due and not yet called.' })
  waiting!: number;

  @ApiProperty({ type: 'number', nullable: true, description: 'Calls a second the endpoint is allowed now: slowed by 429/503 answers, else max_per_second; null when not paced.' })
  pace_per_second!: number | null;
}

/** The stored account before its callback settings: the account view lists created_at first. */
class StoredAccountModel extends AccountIdentityModel {
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

export class AccountModel extends WithPushSettings(StoredAccountModel, 'null until the Open API set_url.') implements AccountView {
  @ApiProperty({ type: [String], description: 'Key names whose values the stored copies hold as "[redacted]" once an event ends (CONTRACT §12).' })
  redaction_fields!: string[];

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Until when the previous signing secret still signs (24 h after a rotation).' })
  previous_secret_expires_at!: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the endpoint was disabled (every attempt failed for ENDPOINT_DISABLE_AFTER); null while enabled.' })
  disabled_at!: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  disabled_reason!: string | null;

  @ApiProperty({ type: EndpointStateModel, nullable: true, description: 'The circuit breaker of this account\'s endpoint (its push_url); null without a push_url.' })
  endpoint!: BreakerState | null;

  @ApiProperty({ type: EndpointLaneModel })
  lane!: EndpointLaneModel;

  @ApiProperty({ type: [DestinationModel], description: 'The primary (id `primary`) first, then the extra destinations, as the Open API lists them (CONTRACT §11).' })
  destinations!: DestinationView[];
}

export class AccountPageModel extends CursorPageModel<AccountView>(AccountModel, NEXT_PAGE_CURSOR) {}

export class RotatedSecretModel implements RotatedSecret {
  @ApiProperty({ description: 'The new secret, shown once.' })
  signing_secret!: string;

  @ApiProperty({ format: 'date-time', description: 'Until then the previous secret signs alongside the new one.' })
  previous_secret_expires_at!: string;
}

export class RotatedTokenModel implements RotatedToken {
  @ApiProperty({ description: 'The new Open API token, shown once. The previous token is refused (2059) from this answer on.' })
  open_api_token!: string;
}

export const ApiCreateAccount = (): MethodDecorator =>
  applyDecorators(
    ApiAdminOperation('Create an account', 201, CreatedAccountModel, 'Answers the Open API token and the signing secret: they are never shown again.'),
    ApiJsonBodyErrors(),
    ApiErrorResponses([409, 'The email or id is already taken.'], 422),
  );

export const ApiListAccounts = (): MethodDecorator =>
  applyDecorators(ApiAdminOperation('List accounts', 200, AccountPageModel, 'Newest first, in cursor pages.'), ApiErrorResponses([400, 'A query parameter is malformed or out of range; `details` names it.']));

export const ApiViewAccount = (): MethodDecorator => ApiAccountOperation(ApiAdminOperation('An account with its settings and endpoint state', 200, AccountModel));

export const ApiEnableEndpoint = (): MethodDecorator =>
  ApiAccountOperation(ApiAdminOperation('Re-enable a disabled endpoint', 200, AccountModel, 'A no-op 200 when it was not disabled. A successful set_url re-enables it too.'));

export const ApiRotateSecret = (): MethodDecorator =>
  ApiAccountOperation(ApiAdminOperation('Rotate the signing secret', 200, RotatedSecretModel, 'The previous secret keeps signing alongside the new one for 24 hours.'));

export const ApiSetDeliveryOptions = (): MethodDecorator =>
  applyDecorators(
    ApiBody({ type: DeliveryOptionsBody }),
    ApiJsonBodyErrors(),
    ApiAccountOperation(
      ApiAdminOperation(
        'Set the delivery options (ordering, max_per_second)',
        200,
        AccountModel,
        'The same body and rules as the Open API set_delivery_options: fields not sent keep their value. Answers the account view; the workers apply the options to the next call.',
      ),
      [422, ADMIN_DELIVERY_OPTIONS_PROBLEM],
    ),
  );

export const ApiRevokePreviousSecret = (): MethodDecorator =>
  ApiAccountOperation(
    ApiAdminOperation(
      'Revoke the previous signing secret',
      200,
      AccountModel,
      'The secret replaced by the last rotation stops signing at once (callbacks carry one signature from now on) instead of at the end of its 24 hours. A no-op 200 when there is none.',
    ),
    [503, 'Revoked in the database, but Redis could not tell the workers; they stop signing with it within 30 s.'],
  );

export const ApiRotateToken = (): MethodDecorator =>
  ApiAccountOperation(ApiAdminOperation('Replace the Open API token', 200, RotatedTokenModel, 'A new token, shown once; every config-api process refuses the old one (2059) from this answer on.'));
