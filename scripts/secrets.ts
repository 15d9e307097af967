import { resealSecrets } from '@app/persistence';
import { EnvironmentError, loadDatabaseSettings, newSecretsKey, readSecretsKeys, SecretBox } from '@app/runtime';

const USAGE = `usage:
  npm run secrets:new-key [-- <key id>]   prints a new SECRETS_KEY value (<key id>:<base64 of 32 bytes>)
  npm run secrets:rotate                  seals every stored secret with SECRETS_KEY: plaintext values from
                                          before encryption, and values sealed with SECRETS_PREVIOUS_KEYS`;

/** What rotating needs: the database and the keys, not the apps' tokens. */
function rotationSettings(): { databaseUrl: string; box: SecretBox } {
  const problems: string[] = [];
  let databaseUrl = '';
  try {
    databaseUrl = loadDatabaseSettings().url;
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    problems.push(...error.problems);
  }
  const keys = readSecretsKeys(process.env, false, problems);
  if ((process.env.SECRETS_KEY ?? '').trim() === '') problems.push('SECRETS_KEY is required: the key every secret is sealed with');
  if (problems.length > 0) throw new EnvironmentError(problems);
  return { databaseUrl, box: new SecretBox(keys) };
}

async function main(command: string | undefined, argument: string | undefined): Promise<void> {
  if (command === 'new-key') {
    const id = argument ?? `k${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new Error('the key id must be 1-32 letters, digits, _ or -');
    process.stdout.write(`${newSecretsKey(id)}\n`);
    return;
  }
  if (command !== 'rotate') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const { databaseUrl, box } = rotationSettings();
  const report = await resealSecrets(databaseUrl, box);
  process.stdout.write(
    `secrets: sealed ${report.accounts} account secret(s), ${report.bot_webhooks} bot webhook key(s) and ${report.destinations} destination credential(s) with key "${box.currentKeyId}"; ` +
      `every stored secret is now under it, so SECRETS_PREVIOUS_KEYS can be removed\n`,
  );
}

main(process.argv[2], process.argv[3]).catch((error: unknown) => {
  // Messages of this code never carry secrets: SecretBox errors name only the row, column and key id.
  process.stderr.write(`secrets: failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
