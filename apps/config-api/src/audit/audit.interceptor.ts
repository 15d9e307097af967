import { type CallHandler, type ExecutionContext, HttpException, Injectable, type NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { catchError, from, mergeMap, type Observable, throwError } from 'rxjs';
import { ApiError, isDatabaseUnavailable, knownErrorStatus, OPEN_API_PREFIX, OpenApiError } from '@app/runtime';
import { accountActor, auditActorOf, type AuditActor } from './audit-actor';
import { AUDIT_METADATA } from './audit.decorator';
import { AuditRecorder } from './audit-recorder.service';

const ANONYMOUS: AuditActor = { actor: 'anonymous', role: null, via: 'portal' };

function statusOf(error: unknown): number {
  const known = knownErrorStatus(error);
  if (known !== null) return known;
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 600) return status;
  return isDatabaseUnavailable(error) ? 503 : 500;
}

function recordId(result: unknown): string | null {
  const body = result as { id?: unknown; destination?: { id?: unknown } } | null | undefined;
  const id = body?.id ?? body?.destination?.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

function positiveInteger(value: unknown): number | null {
  const number = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number > 0 && number <= 2_147_483_647 ? number : null;
}

/**
 * Records every write that declares @Audit, after its outcome is known and before its answer leaves
 * (CONTRACT §15): the entry is written while the answer waits. A change that succeeded but cannot be
 * recorded answers 503 rather than go unrecorded. Refusals by the admin guard (403) are recorded by the
 * guard itself, as guards run before interceptors.
 *
 * The entry names the account (a path's account id, the caller's account, a body's `account_id`, or
 * the account just created) and the target (the other path ids, or the id of what was created); never
 * a body, a secret or a token.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly recorder: AuditRecorder,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const action = context.getType() === 'http' ? this.reflector.get<string | undefined>(AUDIT_METADATA, context.getHandler()) : undefined;
    if (!action) return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    const status = (this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ?? (request.method === 'POST' ? 201 : 200));
    return next.handle().pipe(
      mergeMap((result: unknown) =>
        from(
          this.write(request, action, status, result).then(
            () => result,
            () => {
              throw this.unrecorded(request);
            },
          ),
        ),
      ),
      catchError((error: unknown) => {
        if (error instanceof AuditUnrecorded) return throwError(() => error.answer);
        // The refusal is recorded too; if even that fails, the caller still gets the refusal it earned.
        return from(this.write(request, action, statusOf(error), undefined).catch(() => undefined)).pipe(mergeMap(() => throwError(() => error)));
      }),
    );
  }

  private write(request: Request, action: string, status: number, result: unknown): Promise<void> {
    const resultAccount = positiveInteger((result as { account_id?: unknown } | undefined)?.account_id);
    const who = auditActorOf(request) ?? (resultAccount !== null ? accountActor(resultAccount, 'portal') : ANONYMOUS);
    const params = { ...(request.params as Record<string, string>) };
    let accountId = who.accountId ?? null;
    if (accountId === null && request.path.startsWith('/admin/v1/accounts/')) {
      accountId = positiveInteger(params.id);
      delete params.id;
    }
    accountId ??= positiveInteger((request.body as { account_id?: unknown } | undefined)?.account_id);
    const created = recordId(result);
    let target = Object.values(params).filter((value) => value !== '').join('/') || null;
    if (action === 'account.create') accountId ??= positiveInteger(created);
    else target ??= created;
    return this.recorder.record(request, who, { action, status, accountId, target });
  }

  private unrecorded(request: Request): AuditUnrecorded {
    const message = 'the change was made but could not be recorded in the audit log; look before trying again';
    return new AuditUnrecorded(request.path.startsWith(OPEN_API_PREFIX) ? new OpenApiError(503, 2000, message) : new ApiError(503, 'service_unavailable', message));
  }
}

class AuditUnrecorded extends Error {
  constructor(readonly answer: HttpException) {
    super(answer.message);
  }
}
