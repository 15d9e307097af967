import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { withoutPrototypeMemberKeys } from '@app/payloads';
import { DomainError } from '../errors/domain-error';
import type { ErrorDetail } from './api-error';

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/** Turns class-validator's tree into one entry per offending field path. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const error of errors) {
    const path = joinPath(parent, error.property);
    for (const problem of Object.values(error.constraints ?? {})) details.push({ path, problem });
    if (error.children?.length) details.push(...flattenValidationErrors(error.children, path));
  }
  return details;
}

/** The first few problems in one line, for the error's message (details carry them all). */
function summaryOf(details: ErrorDetail[]): string {
  return details
    .slice(0, 5)
    .map((detail) => `${detail.path}: ${detail.problem}`)
    .join('; ');
}

export function validationFailed(details: ErrorDetail[]): DomainError {
  return new DomainError('validation_failed', `request body is invalid: ${summaryOf(details)}`, details);
}

/**
 * A malformed or out-of-range value in the URL (a query parameter or a path id) is the request's
 * address being wrong, not its body: 400 naming the parameter (CONTRACT §3), where a body answers 422.
 */
export function invalidQuery(details: ErrorDetail[]): DomainError {
  return new DomainError('invalid_query', `query is invalid: ${summaryOf(details)}`, details);
}

/** A body check's refusal (422 with details) said of query values instead: the same details, 400. */
export function asQueryError(error: unknown): unknown {
  return error instanceof DomainError && error.code === 'validation_failed' && error.details ? invalidQuery(error.details) : error;
}

/** Runs a check shared by bodies and queries (a time range, an event filter) on query values. */
export function checkingQuery<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw asQueryError(error);
  }
}

/**
 * Hands class-transformer a copy without keys named like Object.prototype's members: it skips them
 * anyway, and crashes (a 500) on an object whose own `constructor` is an object, taking it for the class.
 * Values the pipe does not transform (bodies typed as plain objects, like ingest's) pass untouched.
 */
class PlainDataValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(this.toValidate(metadata) ? withoutPrototypeMemberKeys(value) : value, metadata);
    } catch (error) {
      throw metadata.type === 'query' || metadata.type === 'param' ? asQueryError(error) : error;
    }
  }
}

/** whitelist + forbidNonWhitelisted: an unknown field is an error, not silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new PlainDataValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => validationFailed(flattenValidationErrors(errors)),
  });
}
