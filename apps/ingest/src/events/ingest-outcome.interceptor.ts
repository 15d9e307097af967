import { type CallHandler, type ExecutionContext, HttpException, Injectable, type NestInterceptor } from '@nestjs/common';
import { catchError, type Observable, tap, throwError } from 'rxjs';
import { ingestedEvents } from './ingest-metrics';

/**
 * Counts the outcome of single-event requests. It wraps the route's pipes too, so envelopes refused
 * by the global ValidationPipe count as rejected; 5xx answers are not a verdict on the event.
 */
@Injectable()
export class IngestOutcomeInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      tap((body: unknown) => {
        const status = (body as { status?: unknown } | null)?.status;
        if (status === 'accepted' || status === 'duplicate') ingestedEvents.inc({ outcome: status });
      }),
      catchError((error: unknown) => {
        if (error instanceof HttpException && error.getStatus() < 500) ingestedEvents.inc({ outcome: 'rejected' });
        return throwError(() => error);
      }),
    );
  }
}
