import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { validationFailed } from '@app/runtime';
import { AdminAccessGuard } from '../admin/identity/admin-access.guard';
import { Permission } from '../admin/identity/permission.decorator';
import { ApiAdminController, ApiAdminOperation, ApiIdParam } from '../admin/admin.docs';
import { IdParamPipe } from '../admin/id-param.pipe';
import { PortalAccessService, type PortalLink, type PortalSession } from '../portal-access/portal-access.service';
import { OpenSessionDto, PortalLinkDto, PortalLinkView, PortalSessionView } from './portal-link.dto';
import { ApiPortalErrors } from './portal.docs';
import { LINK_TTL_PROBLEM, parseLinkTtl } from '../portal-access/portal-ttl';
import { Audit } from '../audit/audit.decorator';

/** An operator's link to an account's portal (CONTRACT §10): what the admin console opens. */
@ApiAdminController('Admin: accounts')
@Controller('admin/v1/accounts')
@UseGuards(AdminAccessGuard)
export class PortalLinksController {
  constructor(private readonly access: PortalAccessService) {}

  @ApiAdminOperation('Make a link to the account portal', 201, PortalLinkView, 'A one-time link for the account\'s own portal, valid for `ttl` (at most 24h).')
  @ApiIdParam()
  @ApiBody({ type: PortalLinkDto, required: false })
  @Permission('administer')
  @Audit('portal_link.create')
  @Post(':id/portal-link')
  @HttpCode(201)
  create(@Param('id', IdParamPipe) accountId: number, @Body() body: PortalLinkDto): Promise<PortalLink> {
    const ttlMs = parseLinkTtl(body?.ttl);
    if (ttlMs === null) throw validationFailed([{ path: 'ttl', problem: LINK_TTL_PROBLEM }]);
    return this.access.createLink(accountId, ttlMs);
  }
}

/** The portal page trades the code of its link for a session (CONTRACT §10). */
@ApiTags('Portal')
@Controller('portal/v1')
export class PortalSessionController {
  constructor(private readonly access: PortalAccessService) {}

  @ApiPortalErrors('Open a portal session', 201, PortalSessionView, 'Trades a portal link\'s code for a session token. A used, expired or unknown code is 401.', { session: false })
  @Audit('portal.session.open')
  @Post('session')
  @HttpCode(201)
  open(@Body() body: OpenSessionDto): Promise<PortalSession> {
    return this.access.openSession(body.code);
  }
}
