import { OpenApiError } from '@app/runtime';

/** Response codes of the Open API (CONTRACT §2). */
export const OpenApiCode = {
  ok: 1000,
  invalidParam: 2000,
  authFailed: 2059,
  badTimestamp: 20621,
  staleTimestamp: 20622,
  replayedNonce: 20623,
  missingNonce: 20624,
} as const;

/** The seed's exception texts, which clients may match on, so they are kept verbatim. */
export const INCORRECT_VALUE_MESSAGE = 'sorry you entered an incorrect value';
export const missingParamMessage = (name: string): string => `param is missing or the value is empty: ${name}`;

export const authFailed = (why: string): OpenApiError => new OpenApiError(401, OpenApiCode.authFailed, why, 'Authentication failed');
export const badTimestamp = (why: string): OpenApiError => new OpenApiError(401, OpenApiCode.badTimestamp, why, 'Invalid timestamp');
export const staleTimestamp = (why: string): OpenApiError => new OpenApiError(401, OpenApiCode.staleTimestamp, why, 'Timestamp expired');
export const replayedNonce = (why: string): OpenApiError => new OpenApiError(401, OpenApiCode.replayedNonce, why, 'Nonce already used');
export const missingNonce = (why: string): OpenApiError => new OpenApiError(401, OpenApiCode.missingNonce, why, 'Invalid nonce');

/** Code 2000 keeps the seed's short message `Unknown error` whatever the HTTP status. */
export const invalidParam = (why: string): OpenApiError => new OpenApiError(400, OpenApiCode.invalidParam, why);
export const rateLimited = (why: string): OpenApiError => new OpenApiError(429, OpenApiCode.invalidParam, why);
export const unsupportedMediaType = (why: string): OpenApiError => new OpenApiError(415, OpenApiCode.invalidParam, why);
export const serviceUnavailable = (why: string): OpenApiError => new OpenApiError(503, OpenApiCode.invalidParam, why);
