import { randomUUID } from 'node:crypto';
import { hexDigest, safeEqual } from './digest';

export const OPEN_API_SIGN_VERSION = 'v2';

export interface OpenApiSignInput {
  email: string;
  openApiToken: string;
  timestamp: string | number;
  nonce: string;
}

/** CONTRACT §2: lowercase hex SHA-256 of `email&open_api_token&timestamp&nonce&v2`. */
export function openApiSign(input: OpenApiSignInput): string {
  return hexDigest('sha256', [input.email, input.openApiToken, String(input.timestamp), input.nonce, OPEN_API_SIGN_VERSION].join('&'));
}

export function verifyOpenApiSign(input: OpenApiSignInput, presentedSign: string): boolean {
  return safeEqual(presentedSign.toLowerCase(), openApiSign(input));
}

/** The five authentication query parameters an Open API client sends with every call. */
export function openApiQuery(
  credentials: { email: string; openApiToken: string },
  options: { timestamp?: number; nonce?: string } = {},
): Record<'email' | 'timestamp' | 'nonce' | 'sign_version' | 'sign', string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? randomUUID();
  return {
    email: credentials.email,
    timestamp,
    nonce,
    sign_version: OPEN_API_SIGN_VERSION,
    sign: openApiSign({ email: credentials.email, openApiToken: credentials.openApiToken, timestamp, nonce }),
  };
}
