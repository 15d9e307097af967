import { Global, Module } from '@nestjs/common';
import { AdminAccessGuard } from './admin-access.guard';
import { AdminTokens } from './admin-tokens';
import { AdminSessions } from './admin-sessions';
import { OidcSignIn } from './oidc-sign-in.service';
import { SessionController, SignInController } from './sign-in.controller';

/** Operators' identity: tokens, single sign-on, sessions, roles and the guard every admin controller uses (global, as the guard is used in every admin module). */
@Global()
@Module({
  controllers: [SignInController, SessionController],
  providers: [AdminTokens, AdminSessions, OidcSignIn, AdminAccessGuard],
  exports: [AdminTokens, AdminSessions, AdminAccessGuard],
})
export class IdentityModule {}
