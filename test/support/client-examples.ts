import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireBuiltFile } from './built-app';

export const ROOT = join(__dirname, '..', '..');

/** The fenced code blocks of one language in a Markdown file, in order. */
export function codeBlocks(markdownPath: string, language: string): string[] {
  const text = readFileSync(join(ROOT, markdownPath), 'utf8');
  return [...text.matchAll(/^```([\w-]+)\n([\s\S]*?)^```$/gm)].filter((match) => match[1] === language).map((match) => match[2]);
}

/** Fails with a clear message when `npm run build` has not built the TypeScript client and its command line. */
export function requireBuiltClient(): void {
  requireBuiltFile(join(ROOT, 'clients', 'typescript', 'dist', 'cli.js'));
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (killed after `timeoutMs`), collecting what it printed. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
