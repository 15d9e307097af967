import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { requestSpan, tracingOn } from './tracing';

/**
 * One server span per Open API and admin call (config-api), named by method and route template so
 * names stay few (`GET /admin/v1/accounts/:id`, never the id itself), parented by the caller's
 * `traceparent`; a call that throws marks its span as an error. Tracing off: the handler runs untouched.
 */
@Injectable()
export class RequestSpanInterceptor implements NestInterceptor {
  intercept(executionContext: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!tracingOn() || executionContext.getType() !== 'http') return next.handle();
    const request = executionContext.switchToHttp().getRequest<Request>();
    const route = (request.route as { path?: string } | undefined)?.path ?? request.path;
    const attributes = { 'http.request.method': request.method, 'http.route': route };
    return from(requestSpan(`${request.method} ${route}`, request.headers, () => lastValueFrom(next.handle(), { defaultValue: undefined }), attributes));
  }
}
