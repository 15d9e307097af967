export interface ErrorDetail {
  /** Path of the offending field, e.g. `message.cellphones[0].id`. */
  path: string;
  problem: string;
}

/**
 * What went wrong, named in the words the admin, ingest and portal APIs answer with (CONTRACT §3's
 * `error`). Stores and services say what happened; which HTTP status that is, is the error filter's
 * business (DOMAIN_ERROR_STATUS), so a service reads the same whether a controller or a background
 * task called it.
 */
export type DomainErrorCode =
  | 'not_found'
  | 'conflict'
  | 'validation_failed'
  | 'invalid_param'
  | 'invalid_query'
  | 'unauthorized'
  | 'forbidden'
  | 'too_many_requests'
  | 'service_unavailable';

export const DOMAIN_ERROR_STATUS: Readonly<Record<DomainErrorCode, number>> = {
  not_found: 404,
  conflict: 409,
  validation_failed: 422,
  invalid_param: 400,
  invalid_query: 400,
  unauthorized: 401,
  forbidden: 403,
  too_many_requests: 429,
  service_unavailable: 503,
};

export class DomainError extends Error {
  override readonly name = 'DomainError';

  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }

  get status(): number {
    return DOMAIN_ERROR_STATUS[this.code];
  }

  /** The `{error, message, details?}` body every API but the Open API answers with. */
  toBody(): { error: DomainErrorCode; message: string; details?: ErrorDetail[] } {
    return { error: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}
