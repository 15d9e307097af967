import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { within } from '@app/runtime/async/within';
import { procCpuMs } from './proc-cpu';

export interface SupervisedProcess {
  name: string;
  child: ChildProcess;
  /** The last 16 KiB the process wrote (stdout and stderr), for error messages. */
  output(): string;
  /** Resident set size in bytes, read from /proc; null once the process is gone. */
  rss(): number | null;
  /** CPU time used so far (user + system), in ms, read from /proc; null once the process is gone. */
  cpuMs(): number | null;
  /** SIGTERM, then SIGKILL after `limitMs`; resolves once the process has exited. */
  stop(limitMs?: number): Promise<void>;
}

const OUTPUT_LIMIT = 16 * 1024;

/**
 * Owns every process the bench starts. Whatever ends the bench (success, an exception, Ctrl-C,
 * SIGTERM), each child is stopped and each registered cleanup (database, Redis keys) runs once,
 * each within a deadline.
 */
export class ProcessSupervisor {
  private readonly running = new Set<SupervisedProcess>();
  private readonly cleanups: Array<{ name: string; run: () => Promise<void> }> = [];
  private shuttingDown: Promise<void> | null = null;

  constructor() {
    process.once('exit', () => {
      for (const entry of this.running) entry.child.kill('SIGKILL');
    });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        process.stderr.write(`\nbench: ${signal}, stopping every process it started and cleaning up\n`);
        void this.shutdown().finally(() => process.exit(130));
      });
    }
  }

  /** Starts a Node script as a child process with exactly `env` (plus PATH), with an IPC channel. */
  start(name: string, script: string, env: Record<string, string>, execArgv: string[] = []): SupervisedProcess {
    const child = fork(script, [], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv,
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const entry: SupervisedProcess = {
      name,
      child,
      output: () => output,
      rss: () => readRss(child.pid),
      cpuMs: () => procCpuMs(child.pid),
      stop: async (limitMs = 10_000) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
        await exited;
        clearTimeout(killer);
      },
    };
    this.running.add(entry);
    void exited.then(() => this.running.delete(entry));
    return entry;
  }

  /** Runs at shutdown, last registered first. */
  onCleanup(name: string, run: () => Promise<void>): void {
    this.cleanups.push({ name, run });
  }

  shutdown(): Promise<void> {
    this.shuttingDown ??= this.runShutdown();
    return this.shuttingDown;
  }

  private async runShutdown(): Promise<void> {
    await Promise.all([...this.running].map((entry) => entry.stop(5_000)));
    for (const cleanup of this.cleanups.reverse()) {
      try {
        await within(cleanup.run(), 15_000, cleanup.name);
      } catch (error) {
        process.stderr.write(`bench: cleanup "${cleanup.name}" failed: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  }
}

function readRss(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
