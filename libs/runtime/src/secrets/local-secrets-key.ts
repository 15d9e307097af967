import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Outside git (.gitignore lists .local/), readable by its owner only. */
export const LOCAL_SECRETS_KEY_FILE = join('.local', 'secrets-key');

/** A new SECRETS_KEY value: `<key id>:<base64 of 32 random bytes>`. */
export function newSecretsKey(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/**
 * The local run's SECRETS_KEY: the one kept in .local/secrets-key, or a new one written there. Kept, not
 * regenerated per start, because the secrets stored under it must stay readable. Created exclusively, so
 * two starts at once end up with the same key.
 */
export function localSecretsKey(root: string): { value: string; generated: boolean } {
  const file = join(root, LOCAL_SECRETS_KEY_FILE);
  mkdirSync(join(root, '.local'), { recursive: true, mode: 0o700 });
  try {
    const value = newSecretsKey(`local-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`);
    writeFileSync(file, `${value}\n`, { flag: 'wx', mode: 0o600 });
    return { value, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { value: readFileSync(file, 'utf8').trim(), generated: false };
  }
}
