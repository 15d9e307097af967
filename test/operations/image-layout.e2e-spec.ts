import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The image check (`node scripts/check-image.mjs`, run by .ci/run) builds from exactly what the
 * Dockerfile copies: a Dockerfile that forgets a folder the build needs fails it, naming what is missing.
 */
jest.setTimeout(600_000);

const ROOT = join(__dirname, '..', '..');

function runCheck(dockerfile: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'check-image.mjs'), '--dockerfile', dockerfile, '--no-docker'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

it('fails when the Dockerfile does not copy a folder the build imports from (examples/, which the demo script uses)', async () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const planted = dockerfile.replace(/^COPY examples \.\/examples\n/m, '');
  expect(planted).not.toBe(dockerfile);
  const folder = mkdtempSync(join(tmpdir(), 'image-layout-'));
  try {
    writeFileSync(join(folder, 'Dockerfile'), planted);
    const { code, output } = await runCheck(join(folder, 'Dockerfile'));
    expect(code).toBe(1);
    expect(output).toContain('image check failed: RUN npm run build failed');
    expect(output).toMatch(/error TS2307: Cannot find module '\.\.\/examples\/receiver\/receiver\.server'/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
