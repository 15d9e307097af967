import { Client } from 'pg';

/**
 * Jest runs test files in several workers at once. Each worker gets a database and a Redis prefix of its
 * own inside the run's namespace, so one worker's delivery workers and reconcilers never take the jobs or
 * claim the events of a suite running in another. The global setup migrates the run's database once and
 * copies it for every worker (CREATE DATABASE … TEMPLATE takes well under a second; migrating takes seconds).
 */
export function workerDatabaseUrl(runDatabaseUrl: string, workerId: string): string {
  const url = new URL(runDatabaseUrl);
  url.pathname = `${url.pathname}_w${workerId}`;
  return url.toString();
}

/** The Redis prefix of one worker: under the run's, so the run's teardown removes its keys too. */
export function workerRedisPrefix(runPrefix: string, workerId: string): string {
  return `${runPrefix}:w${workerId}`;
}

/** The worker this test file runs in: Jest numbers its workers from 1 (also when it runs in band). */
export function currentWorkerId(): string {
  return process.env.JEST_WORKER_ID ?? '1';
}

/** Runs work on the server's maintenance database (create, drop, allow or refuse connections). */
export async function onMaintenance<T>(databaseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const client = new Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function databaseName(databaseUrl: string): string {
  return new URL(databaseUrl).pathname.slice(1);
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  await onMaintenance(databaseUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${databaseName(databaseUrl)}" WITH (FORCE)`));
}

/**
 * A fresh migrated database at targetUrl, copied from the run's migrated database (which nothing connects
 * to once the setup is done, as a template must not be in use).
 */
export async function copyDatabase(templateUrl: string, targetUrl: string): Promise<void> {
  await onMaintenance(templateUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${databaseName(targetUrl)}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${databaseName(targetUrl)}" TEMPLATE "${databaseName(templateUrl)}"`);
  });
}

export async function copyForWorkers(runDatabaseUrl: string, workers: number): Promise<void> {
  for (let worker = 1; worker <= workers; worker += 1) await copyDatabase(runDatabaseUrl, workerDatabaseUrl(runDatabaseUrl, String(worker)));
}

/** Drops the run's database and every database named under it (workers', suites' own namespaces). */
export async function dropRunDatabases(runDatabaseUrl: string): Promise<void> {
  const prefix = databaseName(runDatabaseUrl);
  await onMaintenance(runDatabaseUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE left(datname, $1) = $2', [prefix.length, prefix]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  });
}
