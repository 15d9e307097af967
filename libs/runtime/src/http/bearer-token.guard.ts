import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { ApiError } from './api-error';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The digests of each list of expected tokens, made once per list (the settings' lists live as long as the process). */
const expectedDigests = new WeakMap<readonly string[], readonly Buffer[]>();

function digestsOf(expected: readonly string[]): readonly Buffer[] {
  let digests = expectedDigests.get(expected);
  if (!digests) {
    digests = expected.map(digest);
    expectedDigests.set(expected, digests);
  }
  return digests;
}

/** Compares digests so neither the length nor the content of the token leaks through timing. */
export function tokenMatches(presented: string, expected: readonly string[]): boolean {
  const presentedDigest = digest(presented);
  let matched = false;
  for (const expectedDigest of digestsOf(expected)) matched = timingSafeEqual(presentedDigest, expectedDigest) || matched;
  return matched;
}

function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

abstract class BearerTokenGuard implements CanActivate {
  protected abstract tokens(): readonly string[];
  protected abstract readonly settingName: string;

  canActivate(context: ExecutionContext): boolean {
    this.verify(context.switchToHttp().getRequest<Request>().headers.authorization);
    return true;
  }

  /** Throws the 401 for an `Authorization` header that does not carry one of the tokens; for routes served ahead of Nest too. */
  verify(authorization: string | undefined): void {
    const expected = this.tokens();
    if (expected.length === 0) {
      throw new ApiError(401, 'unauthorized', `${this.settingName} is not configured on this server`);
    }
    const presented = bearerOf(authorization);
    if (presented === null) throw new ApiError(401, 'unauthorized', 'missing bearer token');
    if (!tokenMatches(presented, expected)) throw new ApiError(401, 'unauthorized', 'invalid bearer token');
  }
}

@Injectable()
export class IngestTokenGuard extends BearerTokenGuard {
  protected readonly settingName = 'INGEST_TOKEN';
  constructor(@Inject(ENVIRONMENT) private readonly environment: Environment) {
    super();
  }
  protected tokens(): readonly string[] {
    return this.environment.auth.ingestTokens;
  }
}
