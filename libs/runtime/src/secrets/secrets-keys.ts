/** One AES-256 key and the id stored beside every value sealed with it. */
export interface SecretsKey {
  id: string;
  key: Buffer;
}

/** SECRETS_KEY and SECRETS_PREVIOUS_KEYS, parsed. */
export interface SecretsKeys {
  /** Seals every new value; null only outside production when SECRETS_KEY is unset (the apps then refuse to start). */
  current: SecretsKey | null;
  /** Still opened, never used to seal: the keys being rotated away from. */
  previous: SecretsKey[];
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;

/**
 * `<key id>:<base64 of 32 bytes>`. Problems name the setting and what is wrong, never the key material.
 */
export function parseSecretsKey(name: string, text: string, problems: string[]): SecretsKey | null {
  const separator = text.indexOf(':');
  const id = separator > 0 ? text.slice(0, separator) : '';
  const material = separator > 0 ? text.slice(separator + 1) : '';
  if (!KEY_ID.test(id)) {
    problems.push(`${name} must be <key id>:<base64 of 32 bytes>, the key id 1-32 letters, digits, _ or - (npm run secrets:new-key prints one)`);
    return null;
  }
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(material) ? Buffer.from(material, 'base64') : Buffer.alloc(0);
  if (key.length !== KEY_BYTES) {
    problems.push(`${name}: the key "${id}" must be the base64 of exactly ${KEY_BYTES} bytes (npm run secrets:new-key prints one)`);
    return null;
  }
  return { id, key };
}

/** Reads both settings; a previous key with the current key's id is refused, since a value could not say which it was sealed with. */
export function readSecretsKeys(source: Record<string, string | undefined>, production: boolean, problems: string[]): SecretsKeys {
  const currentText = source.SECRETS_KEY?.trim() ?? '';
  if (currentText === '' && production) {
    problems.push('SECRETS_KEY is required when NODE_ENV=production (it encrypts signing secrets, bot webhook keys and Open API tokens in PostgreSQL)');
  }
  const current = currentText === '' ? null : parseSecretsKey('SECRETS_KEY', currentText, problems);
  const previous: SecretsKey[] = [];
  for (const entry of (source.SECRETS_PREVIOUS_KEYS ?? '').split(',').map((each) => each.trim()).filter(Boolean)) {
    const key = parseSecretsKey('SECRETS_PREVIOUS_KEYS', entry, problems);
    if (!key) continue;
    if (key.id === current?.id || previous.some((each) => each.id === key.id)) {
      problems.push(`SECRETS_PREVIOUS_KEYS: the key id "${key.id}" is used twice (ids must differ from SECRETS_KEY's and each other)`);
      continue;
    }
    previous.push(key);
  }
  return { current, previous };
}
