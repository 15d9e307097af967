import { Global, Module } from '@nestjs/common';
import { AdminAccessGuard } from './admin-access.guard';
import { AdminTokens } from './admin-tokens';

/** Operators' identity: tokens, roles and the guard every admin controller uses (global, as the guard is used in every admin module). */
@Global()
@Module({
  providers: [AdminTokens, AdminAccessGuard],
  exports: [AdminTokens, AdminAccessGuard],
})
export class IdentityModule {}
