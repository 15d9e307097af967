import { type ChildProcess, spawn } from 'node:child_process';

/**
 * config-api as a process of its own for measurements on a seeded database: `args` says how node starts
 * it (the built main.js, or the source through ts-node), `env` adds its settings. Resolves once
 * `/health/ready` answers 200 at `base`.
 */
export async function startConfigApiProcess(args: string[], env: Record<string, string>, base: string, cwd?: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
  for (let tries = 0; tries < 240; tries += 1) {
    try {
      if ((await fetch(`${base}/health/ready`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  child.kill();
  throw new Error('config-api did not become ready');
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

/** Median, p95 and max of the samples in ms. */
/** One GET against the measured process, timed as the client sees it; a refusal stops the measurement. */
export async function timedGet(base: string, path: string, authorization?: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: authorization ? { authorization } : {} });
  const body = (await response.json()) as Record<string, unknown>;
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(body)}`);
  return { ms, body };
}

export function percentiles(samples: number[]): { median: number; p95: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] };
}
