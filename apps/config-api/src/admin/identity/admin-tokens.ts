import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ENVIRONMENT, type Environment } from '@app/runtime';
import { ADMIN_TOKEN_ACTOR, type AdminIdentity } from './admin-identity';

interface KnownToken {
  digest: Buffer;
  identity: AdminIdentity;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** ADMIN_TOKEN (an admin) and the named tokens of ADMIN_TOKENS, as digests. */
@Injectable()
export class AdminTokens {
  private readonly known: KnownToken[];

  constructor(@Inject(ENVIRONMENT) environment: Environment) {
    const adminToken = environment.auth.adminToken;
    this.known = [
      ...(adminToken ? [{ digest: digest(adminToken), identity: { actor: ADMIN_TOKEN_ACTOR, role: 'admin' as const, via: 'token' as const } }] : []),
      ...environment.identity.adminTokens.map(({ name, role, token }) => ({ digest: digest(token), identity: { actor: name, role, via: 'token' as const } })),
    ];
  }

  get configured(): boolean {
    return this.known.length > 0;
  }

  /** Compares every token's digest, so neither which token matched nor its length leaks through timing. */
  identify(presented: string): AdminIdentity | null {
    const presentedDigest = digest(presented);
    let found: AdminIdentity | null = null;
    for (const token of this.known) {
      if (timingSafeEqual(presentedDigest, token.digest) && found === null) found = token.identity;
    }
    return found;
  }
}
