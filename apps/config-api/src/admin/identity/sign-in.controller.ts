import { Controller, Get, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
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
@ApiTags('Admin: identity and audit')
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
  @ApiOperation({ summary: 'Sign-in options', description: 'Whether the console offers **Sign in with SSO** (OIDC_ISSUER and OIDC_CLIENT_ID set). No credentials needed.' })
  @ApiResponse({ status: 200, description: '`{"sso": true|false}`.' })
  @Get('sign-in-options')
  options(): { sso: boolean } {
    return { sso: this.oidc.settings !== null };
  }

  @ApiOperation({ summary: 'Start single sign-on', description: 'Redirects the browser to the OIDC issuer (authorization code with PKCE S256, `state` and `nonce`); a page of the console, not an API call.' })
  @ApiResponse({ status: 302, description: 'To the issuer\'s authorization endpoint; sets the short-lived `admin_signin` cookie tying the sign-in to this browser.' })
  @ApiResponse({ status: 404, description: 'Single sign-on is not configured.' })
  @ApiResponse({ status: 503, description: 'The issuer cannot be reached (a page saying so).' })
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

  @ApiOperation({ summary: 'Complete single sign-on', description: 'Where the issuer sends the browser back: checks `state`, exchanges the code with the PKCE verifier, verifies the ID token and reads the role from OIDC_ROLES_CLAIM. Recorded in the audit log as `signin` or `signin.refused`.' })
  @ApiResponse({ status: 303, description: 'Signed in: to the console, with the `admin_session` cookie (HttpOnly, SameSite=Lax, Secure under https, at most 8 hours).' })
  @ApiResponse({ status: 400, description: 'Not the sign-in this browser started (state), expired, or the code or ID token was not accepted: a page saying so.' })
  @ApiResponse({ status: 403, description: 'The user has no role in the roles claim: a page naming the claim.' })
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

  @ApiOperation({ summary: 'Sign out', description: 'Ends the single sign-on session on the server and clears its cookie; recorded as `signout`.' })
  @ApiResponse({ status: 204, description: 'Signed out (also when there was no session).' })
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
  @ApiResponse({ status: 200, type: AdminSessionModel, description: 'The caller.' })
  @Permission('read')
  @Get()
  view(@Req() request: Request): AdminSessionView {
    const identity = adminIdentityOf(request)!;
    return { actor: identity.actor, role: identity.role, via: identity.via, csrf_token: identity.csrf ?? null };
  }
}
