import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ApiError, type ErrorDetail } from './api-error';

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

export function validationFailed(details: ErrorDetail[]): ApiError {
  const summary = details
    .slice(0, 5)
    .map((detail) => `${detail.path}: ${detail.problem}`)
    .join('; ');
  return new ApiError(422, 'validation_failed', `request body is invalid: ${summary}`, details);
}

/** whitelist + forbidNonWhitelisted: an unknown field is an error, not silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => validationFailed(flattenValidationErrors(errors)),
  });
}
