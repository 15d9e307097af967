import { Client } from 'pg';
import { SecretBox, SecretBoxError } from '@app/runtime';

/** Every column that holds a secret, by table; each is sealed by SecretBox. */
export const SECRET_COLUMNS = {
  accounts: ['open_api_token'],
  bot_webhooks: ['key'],
  destinations: ['target', 'auth', 'signing_secret', 'previous_signing_secret'],
} as const;

/** Each table's key, which its walk follows (a destination's id is unique within its account), and where the walk starts. */
const KEYS: Record<keyof typeof SECRET_COLUMNS, { columns: string[]; first: (string | number)[] }> = {
  accounts: { columns: ['id'], first: [0] },
  bot_webhooks: { columns: ['id'], first: [0] },
  destinations: { columns: ['account_id', 'id'], first: [0, ''] },
};

type SecretTable = keyof typeof SECRET_COLUMNS;
const BATCH = 500;

/** How many stored values were (re-)sealed under the current key, by table. */
export type ResealReport = Record<SecretTable, number>;

/**
 * Seals every secret that is not sealed under the current key: plaintext values from before encryption,
 * and values sealed with a key now in SECRETS_PREVIOUS_KEYS. Rows are locked in batches (FOR UPDATE), so
 * a credential rotated meanwhile is never overwritten with its old value. Harmless to run again or from
 * several processes at once; a second run finds nothing to do.
 */
export async function resealSecrets(databaseUrl: string, box: SecretBox): Promise<ResealReport> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const report: ResealReport = { accounts: 0, bot_webhooks: 0, destinations: 0 };
    for (const table of Object.keys(SECRET_COLUMNS) as SecretTable[]) report[table] = await resealTable(client, box, table);
    return report;
  } finally {
    await client.end();
  }
}

async function resealTable(client: Client, box: SecretBox, table: SecretTable): Promise<number> {
  const columns: readonly string[] = SECRET_COLUMNS[table];
  const prefix = `gcm1:${box.currentKeyId}:`;
  // left() rather than LIKE: key ids may contain `_`, a LIKE wildcard.
  const stale = columns.map((column) => `(${column} IS NOT NULL AND left(${column}, length($1)) <> $1)`).join(' OR ');
  let resealed = 0;
  const key = KEYS[table];
  const keyList = key.columns.join(', ');
  let after = key.first;
  const afterPlaceholders = key.columns.map((_, index) => `$${index + 2}`).join(', ');
  for (;;) {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<Record<string, string | number | null>>(
        `SELECT ${keyList}, ${columns.join(', ')} FROM ${table} WHERE (${keyList}) > (${afterPlaceholders}) AND (${stale}) ORDER BY ${keyList} LIMIT ${BATCH} FOR UPDATE`,
        [prefix, ...after],
      );
      for (const row of rows) {
        const id = key.columns.map((column) => row[column] as string | number);
        const changes = columns.filter((column) => typeof row[column] === 'string' && box.needsResealing(row[column]));
        const values = changes.map((column) => resealValue(box, row[column] as string, `${table} ${id.join('/')} ${column}`));
        const where = key.columns.map((column, index) => `${column} = $${index + 1}`).join(' AND ');
        await client.query(`UPDATE ${table} SET ${changes.map((column, index) => `${column} = $${index + 1 + id.length}`).join(', ')} WHERE ${where}`, [
          ...id,
          ...values,
        ]);
        resealed += changes.length;
        after = id;
      }
      await client.query('COMMIT');
      if (rows.length < BATCH) return resealed;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}

/** Errors say which value failed and why, never the value itself. */
function resealValue(box: SecretBox, stored: string, where: string): string {
  try {
    return box.seal(box.open(stored));
  } catch (error) {
    if (error instanceof SecretBoxError) throw new SecretBoxError(`${where}: ${error.message}`);
    throw error;
  }
}
