import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError } from '../errors/domain-error';
import { ApiError, OpenApiError } from './api-error';
import { isDatabaseUnavailable, loggableError } from './database-errors';

export const OPEN_API_PREFIX = '/open_api_v1';

const CODE_WORDS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'too_many_requests',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

/** The `error` word of the `{error, message}` shape for an HTTP status. */
export function errorCodeWord(status: number): string {
  return CODE_WORDS[status] ?? (status >= 500 ? 'internal_error' : 'error');
}

/**
 * Errors raised by body-parser before a route runs carry `status` and `type` instead of being HttpExceptions.
 * A body that fails to decompress (`Content-Encoding: gzip` on bytes that are not gzip) comes as zlib's
 * own error with status 400 and no type: a client error too, not a 500.
 */
function bodyParserStatus(error: unknown): { status: number; message: string } | null {
  const candidate = error as { status?: unknown; type?: unknown; message?: unknown };
  if (typeof candidate?.status !== 'number') return null;
  if (typeof candidate.type !== 'string') {
    const decoding = candidate.status >= 400 && candidate.status < 500 && error instanceof Error && 'code' in error;
    return decoding ? { status: candidate.status, message: 'request body could not be decoded as its Content-Encoding says' } : null;
  }
  const messages: Record<string, string> = {
    'entity.too.large': 'request body is too large',
    'entity.parse.failed': 'request body is not valid JSON',
    'encoding.unsupported': 'request body encoding is not supported',
    'charset.unsupported': 'request body charset is not supported',
  };
  return { status: candidate.status, message: messages[candidate.type] ?? String(candidate.message) };
}

const logger = new Logger('HttpErrorFilter');

/** The status an error will be answered with, when it is one the APIs know (null: a 500 or a 503 of the filter's choosing). */
export function knownErrorStatus(error: unknown): number | null {
  if (error instanceof DomainError) return error.status;
  if (error instanceof HttpException) return error.getStatus();
  return null;
}

export interface ErrorAnswer {
  status: number;
  body: unknown;
}

/**
 * The one place that turns exceptions into wire format: Open API paths get the `{code, message,
 * exception}` shape, everything else `{error, message, details?}`. Unknown errors are logged and
 * answered 500 without internals, the log line naming the request's id (`request.id`, given by
 * requestLog) as its own log line does. Used by the filter below and by routes served ahead of Express.
 */
export function errorAnswer(exception: unknown, path: string, request?: { id?: unknown }): ErrorAnswer {
  if (exception instanceof ApiError || exception instanceof OpenApiError) {
    return { status: exception.getStatus(), body: exception.getResponse() };
  }
  // A service's or a store's own error: the same `{error, message, details?}` body on every path.
  if (exception instanceof DomainError) return { status: exception.status, body: exception.toBody() };

  let status = 500;
  let message = 'internal error';
  const parserError = bodyParserStatus(exception);
  if (parserError) {
    ({ status, message } = parserError);
  } else if (exception instanceof HttpException) {
    status = exception.getStatus();
    const body = exception.getResponse();
    const raw = typeof body === 'string' ? body : (body as { message?: unknown }).message;
    message = Array.isArray(raw) ? raw.join('; ') : typeof raw === 'string' ? raw : exception.message;
  } else if (isDatabaseUnavailable(exception)) {
    // An outage, not a bug: tell the caller to come back rather than report an internal error.
    status = 503;
    message = 'the database is unavailable; try again shortly';
    logger.warn({ requestId: request?.id, path, ...loggableError(exception) }, 'database unavailable');
  } else {
    logger.error({ requestId: request?.id, path, ...loggableError(exception) }, 'unhandled error');
  }

  if (path.startsWith(OPEN_API_PREFIX)) return { status, body: { code: 2000, message: 'Unknown error', exception: { message } } };
  return { status, body: { error: errorCodeWord(status), message } };
}

@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    if (response.headersSent) return;
    const { status, body } = errorAnswer(exception, request.path ?? request.url ?? '', request);
    response.status(status).json(body);
  }
}
