import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretsKey, SecretsKeys } from './secrets-keys';

/** Marks a sealed value; anything else in a secret column is a plaintext value from before encryption. */
const SEALED_PREFIX = 'gcm1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Never carries plaintext or ciphertext in its message: only where the value is and what went wrong. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export class SecretsKeyMissingError extends SecretBoxError {
  constructor() {
    super(
      'SECRETS_KEY is not set: it encrypts signing secrets, bot webhook keys and Open API tokens in PostgreSQL. ' +
        'Set it to <key id>:<base64 of 32 bytes> (npm run secrets:new-key prints one; npm start generates a local one).',
    );
  }
}

/** The key id a stored value was sealed with; null for a plaintext value. */
export function sealedKeyId(stored: string): string | null {
  if (!stored.startsWith(SEALED_PREFIX)) return null;
  const end = stored.indexOf(':', SEALED_PREFIX.length);
  return end > SEALED_PREFIX.length ? stored.slice(SEALED_PREFIX.length, end) : null;
}

/**
 * The one place secrets are encrypted and decrypted (signing secrets, bot webhook keys, Open API tokens).
 * Stored form: `gcm1:<key id>:<base64url IV>:<base64url ciphertext and GCM tag>`, AES-256-GCM with a
 * random 96-bit IV per value. Each value names its key, so SECRETS_KEY can be replaced while old values
 * are still readable through SECRETS_PREVIOUS_KEYS until `npm run secrets:rotate` re-encrypts them.
 * A value without the prefix is a plaintext one written before encryption existed; it is returned as is.
 */
export class SecretBox {
  private readonly current: SecretsKey;
  private readonly byId: Map<string, SecretsKey>;

  constructor(keys: SecretsKeys) {
    if (!keys.current) throw new SecretsKeyMissingError();
    this.current = keys.current;
    this.byId = new Map([keys.current, ...keys.previous].map((key) => [key.id, key]));
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${this.current.id}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  open(stored: string): string {
    if (!stored.startsWith(SEALED_PREFIX)) return stored;
    const [keyId, ivText, bodyText] = stored.slice(SEALED_PREFIX.length).split(':');
    const key = this.byId.get(keyId ?? '');
    if (!key) {
      throw new SecretBoxError(`a secret is sealed with key id "${keyId ?? ''}", which is neither SECRETS_KEY nor in SECRETS_PREVIOUS_KEYS`);
    }
    const iv = Buffer.from(ivText ?? '', 'base64url');
    const body = Buffer.from(bodyText ?? '', 'base64url');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new SecretBoxError(`a secret sealed with key id "${keyId}" is malformed`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, iv);
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(`a secret sealed with key id "${keyId}" does not decrypt with that key (wrong key material, or the value was altered)`);
    }
  }

  openNullable(stored: string | null): string | null {
    return stored === null ? null : this.open(stored);
  }

  /** True when the value is plaintext or sealed with a key other than the current one. */
  needsResealing(stored: string): boolean {
    return sealedKeyId(stored) !== this.current.id;
  }
}
