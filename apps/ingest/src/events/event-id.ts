import { randomBytes } from 'node:crypto';

/**
 * Event ids travel as the `webhook-id` header of every callback, so they are limited to printable
 * ASCII without spaces (0x21-0x7E): no control characters, no whitespace, nothing a header would refuse.
 */
export const EVENT_ID_PATTERN = /^[\x21-\x7e]+$/;
export const EVENT_ID_MAX_LENGTH = 128;

const CROCKFORD_BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Server-assigned id when the sender gives none: `evt_` + a ULID-style 26 characters (48-bit
 * millisecond time, then 80 random bits, Crockford base32), so ids sort roughly by creation time and
 * never collide in practice.
 */
export function generateEventId(now: number = Date.now()): string {
  let time = '';
  let remaining = Math.max(0, Math.floor(now));
  for (let position = 0; position < 10; position += 1) {
    time = CROCKFORD_BASE32[remaining % 32] + time;
    remaining = Math.floor(remaining / 32);
  }
  // 256 is a multiple of 32, so masking each byte to 5 bits keeps every character uniform.
  let random = '';
  for (const byte of randomBytes(16)) random += CROCKFORD_BASE32[byte & 31];
  return `evt_${time}${random}`;
}

export function isValidEventId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= EVENT_ID_MAX_LENGTH && EVENT_ID_PATTERN.test(value);
}
