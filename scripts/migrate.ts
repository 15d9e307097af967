import { runMigrations } from '@app/persistence';
import { environmentOrExit, loadDatabaseSettings } from '@app/runtime';

/** `npm run migrate`: creates the database if missing and applies pending migrations; harmless to repeat. */
async function main(): Promise<void> {
  const database = environmentOrExit('migrate', () => loadDatabaseSettings());
  const report = await runMigrations(database.url);
  const target = new URL(database.url);
  target.password = target.password ? '***' : '';
  if (report.databaseCreated) process.stdout.write(`migrate: created database ${target.pathname.slice(1)}\n`);
  process.stdout.write(
    report.applied.length
      ? `migrate: applied ${report.applied.join(', ')} on ${target.toString()}\n`
      : `migrate: ${target.toString()} is up to date\n`,
  );
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`migrate: failed: ${message}\n`);
  if (/ECONNREFUSED|connect/i.test(message)) {
    process.stderr.write(
      'migrate: is PostgreSQL running? Locally: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n',
    );
  }
  process.exit(1);
});
