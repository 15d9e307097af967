import { readSecretsKeys, SecretBox } from '@app/runtime';

/**
 * Secrets are sealed in PostgreSQL; tests that compare what an API answered with what was stored open
 * the stored value with the test run's key (set by the global setup).
 */
export function openStoredSecret(stored: string): string {
  return new SecretBox(readSecretsKeys({ SECRETS_KEY: process.env.SECRETS_KEY }, false, [])).open(stored);
}
