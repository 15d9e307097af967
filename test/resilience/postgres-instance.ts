import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './app-process';
import { cleanup } from './cleanup-stack';

const run = promisify(execFile);

/** The newest installed server binaries, or PG_BIN when set. */
function postgresBinDirectory(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(join(root, name, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL server binaries under ${root}/*/bin (install postgresql, or set PG_BIN)`);
  return join(root, newest, 'bin');
}

/** PostgreSQL refuses to run as root: as root every server command runs as the `postgres` OS user. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function idOf(flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
}

/**
 * A PostgreSQL instance of the drill run's own (initdb into a temporary directory, its own loopback port,
 * its socket in that directory), so drills can stop and start it without touching any other database.
 * fsync is off: the drills stop the server cleanly and test the apps, not the disk.
 */
export class PostgresInstance {
  private started = false;
  private readonly unregister: () => void;

  private constructor(
    readonly port: number,
    private readonly directory: string,
    private readonly bin: string,
  ) {
    this.unregister = cleanup.add(
      'postgres',
      () => this.destroy(),
      () => this.destroySync(),
    );
  }

  static async create(): Promise<PostgresInstance> {
    const bin = postgresBinDirectory();
    const directory = mkdtempSync(join(tmpdir(), 'callbacks-drill-pg-'));
    if (process.getuid?.() === 0) chownSync(directory, idOf('-u'), idOf('-g'));
    const instance = new PostgresInstance(await freePort(), directory, bin);
    const [command, args] = asServerUser(join(bin, 'initdb'), [
      '-D',
      instance.dataDirectory,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--no-sync',
    ]);
    await run(command, args, { timeout: 60_000 });
    return instance;
  }

  private get dataDirectory(): string {
    return join(this.directory, 'data');
  }

  get running(): boolean {
    return this.started;
  }

  /** A connection URL for one database of this instance (migrate creates it when missing). */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.directory}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c max_connections=200',
      // Commit times of rows, so the duplicates drill can say how long a call's outcome took to commit.
      '-c track_commit_timestamp=on',
    ].join(' ');
    await this.pgCtl(['start', '-w', '-t', '30', '-o', options, '-l', join(this.directory, 'server.log')]);
    this.started = true;
  }

  /** A fast shutdown: sessions are cut, the next connection attempt is refused. */
  async stop(): Promise<void> {
    await this.pgCtl(['stop', '-w', '-t', '30', '-m', 'fast']);
    this.started = false;
  }

  /** The server log's last lines, for failure messages. */
  logTail(lines = 10): string {
    const file = join(this.directory, 'server.log');
    return existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '';
  }

  async destroy(): Promise<void> {
    if (this.started || existsSync(join(this.dataDirectory, 'postmaster.pid'))) {
      await this.pgCtl(['stop', '-w', '-t', '20', '-m', 'immediate']).catch(() => undefined);
      this.started = false;
    }
    rmSync(this.directory, { recursive: true, force: true });
    this.unregister();
  }

  private destroySync(): void {
    if (existsSync(join(this.dataDirectory, 'postmaster.pid'))) {
      const [command, args] = asServerUser(join(this.bin, 'pg_ctl'), ['stop', '-D', this.dataDirectory, '-m', 'immediate', '-w', '-t', '10']);
      spawnSync(command, args, { stdio: 'ignore', timeout: 15_000 });
    }
    rmSync(this.directory, { recursive: true, force: true });
  }

  private async pgCtl(args: string[]): Promise<void> {
    const [command, commandArgs] = asServerUser(join(this.bin, 'pg_ctl'), ['-D', this.dataDirectory, ...args]);
    try {
      await run(command, commandArgs, { timeout: 45_000 });
    } catch (error) {
      throw new Error(`pg_ctl ${args[0]} failed: ${error instanceof Error ? error.message : String(error)}\n${this.logTail()}`);
    }
  }
}
