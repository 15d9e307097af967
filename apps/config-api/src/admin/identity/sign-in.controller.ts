import { Controller, Get, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AdminSessionView } from '@app/payloads';
import { ApiError } from '@app/runtime';
import { AuditRecorder } from '../../audit/audit-recorder.service';
import { ApiAdminController } from '../admin.docs';
import { AdminAccessGuard } from './admin-access.guard';
import { adminIdentityOf } from './admin-identity';
import { AdminSessions } from './admin-sessions';
import { OidcSignIn } from './oidc-sign-in.service';
import { Permission } from './permission.decorator';
import { clearCookie, cookieOf, SESSION_COOKIE, SESSION_TTL_SECONDS, setCookie, SIGN_IN_COOKIE, SIGN_IN_TTL_SECONDS } from './session-cookies';
import { sendRefusal } from './sign-in-pages';
import { AdminSessionModel } from './identity.docs';

/**
 * The console's single sign-on (CONTRACT §15): /admin/login sends the browser to the issuer,
 * /admin/callback completes the sign-in and sets the session cookie, /admin/logout ends it. Every
 * sign-in, refused sign-in and sign-out is recorded in the audit log before the answer leaves.
 */
@Controller('admin')
export class SignInController {
  constructor(
    private readonly oidc: OidcSignIn,
    private readonly sessions: AdminSessions,
    private readonly audit: AuditRecorder,
  ) {}

  private get publicUrl(): string {
    return this.oidc.redirectUri.replace(/\/admin\/callback$/, '');
  }

  private get consoleUrl(): string {
    return `${this.publicUrl}/admin`;
  }

  /** Whether the console offers **Sign in with SSO** (asked before anyone is signed in). */
  @ApiExcludeEndpoint()
  @Get('sign-in-options')
  options(): { sso: boolean } {
    return { sso: this.oidc.settings !== null };
  }

  @ApiExcludeEndpoint()
  @Get('login')
  async login(@Res() response: Response): Promise<void> {
    if (this.oidc.settings === null) throw new ApiError(404, 'not_found', 'single sign-on is not configured on this server (OIDC_ISSUER, OIDC_CLIENT_ID)');
    let started: { url: string; signInId: string };
    try {
      started = await this.oidc.start();
    } catch {
      sendRefusal(response, 503, this.consoleUrl, 'The identity provider cannot be reached right now. Try again shortly.');
      return;
    }
    setCookie(response, this.publicUrl, SIGN_IN_COOKIE, started.signInId, SIGN_IN_TTL_SECONDS);
    response.setHeader('Cache-Control', 'no-store');
    response.redirect(302, started.url);
  }

  @ApiExcludeEndpoint()
  @Get('callback')
  async callback(@Req() request: Request, @Res() response: Response): Promise<void> {
    if (this.oidc.settings === null) throw new ApiError(404, 'not_found', 'single sign-on is not configured on this server (OIDC_ISSUER, OIDC_CLIENT_ID)');
    const publicUrl = this.publicUrl;
    const search = request.originalUrl.includes('?') ? request.originalUrl.slice(request.originalUrl.indexOf('?') + 1) : '';
    const outcome = await this.oidc.complete(cookieOf(request, SIGN_IN_COOKIE), search);
    clearCookie(response, publicUrl, SIGN_IN_COOKIE);
    if (outcome.kind === 'refused') {
      await this.audit.record(request, { actor: outcome.actor, role: null, via: 'oidc' }, { action: 'signin.refused', status: outcome.status });
      sendRefusal(response, outcome.status, this.consoleUrl, outcome.reason);
      return;
    }
    const token = await this.sessions.open({ actor: outcome.actor, role: outcome.role });
    await this.audit.record(request, { actor: outcome.actor, role: outcome.role, via: 'oidc' }, { action: 'signin', status: 303 });
    setCookie(response, publicUrl, SESSION_COOKIE, token, SESSION_TTL_SECONDS);
    response.setHeader('Cache-Control', 'no-store');
    response.redirect(303, this.consoleUrl);
  }

  @ApiExcludeEndpoint()
  @Post('logout')
  @HttpCode(204)
  async logout(@Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<void> {
    const token = cookieOf(request, SESSION_COOKIE);
    const ended = token === null ? null : await this.sessions.close(token);
    if (ended) await this.audit.record(request, { actor: ended.actor, role: ended.role, via: 'oidc' }, { action: 'signout', status: 204 });
    clearCookie(response, this.publicUrl, SESSION_COOKIE);
  }
}

/** GET /admin/v1/session: who the console is signed in as, for any role. */
@ApiAdminController('Admin: identity and audit')
@Controller('admin/v1/session')
@UseGuards(AdminAccessGuard)
export class SessionController {
  @ApiOperation({ summary: 'Who is calling', description: 'The caller\'s actor, role and how they signed in; `csrf_token` is what a console signed in with single sign-on sends as `x-csrf-token` on every write (null for bearer tokens).' })
  @ApiResponse({ status: 200, type: AdminSessionModel })
  @Permission('read')
  @Get()
  view(@Req() request: Request): AdminSessionView {
    const identity = adminIdentityOf(request)!;
    return { actor: identity.actor, role: identity.role, via: identity.via, csrf_token: identity.csrf ?? null };
  }
}
