import { HttpException } from '@nestjs/common';
import type { ErrorDetail } from '../errors/domain-error';

export type { ErrorDetail } from '../errors/domain-error';

/** Admin and ingest error: `{"error": "<code_word>", "message": "<text>", "details"?: [...]}` (CONTRACT §3). */
export class ApiError extends HttpException {
  constructor(
    status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super({ error: code, message, ...(details ? { details } : {}) }, status);
  }
}

/** Open API error: `{"code": <int>, "message": "<short text>", "exception": {"message": "<what is wrong>"}}` (CONTRACT §2). */
export class OpenApiError extends HttpException {
  constructor(
    status: number,
    readonly code: number,
    readonly exceptionMessage: string,
    readonly shortMessage = 'Unknown error',
  ) {
    super({ code, message: shortMessage, exception: { message: exceptionMessage } }, status);
  }
}
