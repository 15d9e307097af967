import { Body, Controller, Get, HttpCode, Inject, Post, Put, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBody, ApiProperty, PickType } from '@nestjs/swagger';
import type { RotatedSecret, StatsSeries } from '@app/payloads';
import { ApiError, ENVIRONMENT, type Environment, LimitUnavailableError } from '@app/runtime';
import { AccountCredentialsService } from '../admin/accounts/account-credentials.service';
import { AccountsService } from '../admin/accounts/accounts.service';
import { AccountModel, RotatedSecretModel } from '../admin/accounts/accounts.docs';
import { StatsSeriesModel } from '../admin/stats/stats.docs';
import { StatsSeriesService } from '../admin/stats/stats-series.service';
import { TestEventLimitError, TestEventService } from '../open-api/test-event.service';
import { PortalAccount, PortalSessionGuard } from '../portal-access/portal-session.guard';
import { type PortalSettings, PortalSettingsService } from './portal-settings.service';
import { PortalHealthQueryDto, PortalSettingsBody, PortalSettingsView, PortalTestEventDto } from './portal.dto';
import { ApiPortalErrors } from './portal.docs';
import { Audit } from '../audit/audit.decorator';

class PortalEndpointState extends PickType(AccountModel, ['push_url', 'disabled_at', 'disabled_reason', 'endpoint'] as const) {}

class PortalHealth extends StatsSeriesModel {
  @ApiProperty({ type: PortalEndpointState })
  state!: PortalEndpointState;
}

class TestEventSentModel {
  @ApiProperty({ example: 'test_5f0c1e0a9b7d4c3e8a2b6d1f0e9c8b7a' })
  event_id!: string;
}

/** The endpoint of the session's account: settings, state, secret, test events and health (CONTRACT §10). */
@Controller('portal/v1')
@UseGuards(PortalSessionGuard)
export class PortalEndpointController {
  constructor(
    private readonly settings: PortalSettingsService,
    private readonly accounts: AccountsService,
    private readonly credentials: AccountCredentialsService,
    private readonly series: StatsSeriesService,
    private readonly testEvents: TestEventService,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  @ApiPortalErrors('Read the callback settings', 200, PortalSettingsView)
  @Get('settings')
  read(@PortalAccount() accountId: number): Promise<PortalSettings> {
    return this.settings.read(accountId);
  }

  @ApiPortalErrors('Change the callback settings', 200, PortalSettingsView, 'Any of push_url, push_content_type, permissions, under the Open API rules; a wrong field is 400 with the Open API text in `details`, and nothing is stored.', { errors: [[400, 'A field is wrong (the Open API rule and text, code 2000), or the body is not valid JSON.'], 413] })
  @ApiBody({ type: PortalSettingsBody })
  @Audit('settings.update')
  @Put('settings')
  update(@PortalAccount() accountId: number, @Body() body: unknown): Promise<PortalSettings> {
    return this.settings.update(accountId, body, this.environment.delivery.allowPrivateTargets);
  }

  @ApiPortalErrors('Enable the endpoint again', 200, PortalEndpointState, 'Calls resume with a fresh failure clock; events that failed meanwhile stay failed until redelivered.')
  @Audit('endpoint.enable')
  @Post('endpoint/enable')
  @HttpCode(200)
  async enable(@PortalAccount() accountId: number): Promise<PortalEndpointState> {
    return stateOf(await this.accounts.enableEndpoint(accountId));
  }

  @ApiPortalErrors('Rotate the signing secret', 200, RotatedSecretModel, 'The new secret is shown this once; the previous one keeps signing alongside it for 24 hours.')
  @Audit('secret.rotate')
  @Post('rotate-secret')
  @HttpCode(200)
  rotate(@PortalAccount() accountId: number): Promise<RotatedSecret> {
    return this.credentials.rotateSecret(accountId);
  }

  @ApiPortalErrors(
    'Send a test event',
    202,
    TestEventSentModel,
    "The example message of the action, pushed like any event even when the action's permission is off. At most 10 a minute per account, the Open API's `send_test_event` included.",
    { errors: [422, [429, 'The account sent 10 test events this minute; `Retry-After` says when to come back.']] },
  )
  @Audit('send_test_event')
  @Post('test-event')
  @HttpCode(202)
  async testEvent(@PortalAccount() accountId: number, @Body() body: PortalTestEventDto, @Res({ passthrough: true }) response: Response): Promise<TestEventSentModel> {
    try {
      return await this.testEvents.send(accountId, body.action);
    } catch (error) {
      if (error instanceof TestEventLimitError) {
        response.setHeader('Retry-After', String(error.retryAfterSeconds));
        throw new ApiError(429, 'too_many_requests', error.message);
      }
      if (error instanceof LimitUnavailableError) throw new ApiError(503, 'service_unavailable', `${error.message}; try again shortly`);
      throw error;
    }
  }

  @ApiPortalErrors('Delivery health', 200, PortalHealth, 'The series of `GET /admin/v1/stats/series` for this account, with the breaker and disabled state.', { errors: [422] })
  @Get('health')
  async health(@PortalAccount() accountId: number, @Query() query: PortalHealthQueryDto): Promise<StatsSeries & { state: PortalEndpointState }> {
    const [series, account] = await Promise.all([this.series.series({ ...query, account_id: accountId }), this.accounts.view(accountId)]);
    return { ...series, state: stateOf(account) };
  }
}

function stateOf(account: Awaited<ReturnType<AccountsService['view']>>): PortalEndpointState {
  return { push_url: account.push_url, disabled_at: account.disabled_at, disabled_reason: account.disabled_reason, endpoint: account.endpoint };
}
