import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ErrorDetail } from '@app/runtime';
import { readDestinationAuth } from './destination-auth.validation';

/* Real keys and self-signed certificates (openssl), so the check sees what a user would send. */
const dir = mkdtempSync(join(tmpdir(), 'mtls-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `key`: openssl genpkey's arguments for the key's kind. */
function keyAndCertificate(name: string, key: string[]): { certificate: string; private_key: string } {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run('genpkey', ...key, '-out', `${name}.key`);
  run('req', '-x509', '-new', '-key', `${name}.key`, '-out', `${name}.pem`, '-days', '1', '-subj', `/CN=${name}`);
  return { certificate: readFileSync(join(dir, `${name}.pem`), 'utf8'), private_key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

const rsa = (bits: number) => ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${bits}`];
const ec = (curve: string) => ['-algorithm', 'EC', '-pkeyopt', `ec_paramgen_curve:${curve}`];

async function problemsOf(auth: Record<string, unknown>): Promise<ErrorDetail[]> {
  const problems: ErrorDetail[] = [];
  await readDestinationAuth({ type: 'mtls', ...auth }, problems, true);
  return problems;
}

describe('mtls auth keys (CONTRACT §11)', () => {
  it.each([
    ['rsa-2048', rsa(2048)],
    ['ec-p256', ec('P-256')],
    ['ec-p384', ec('P-384')],
  ])('accepts %s matching its certificate', async (name, key) => {
    expect(await problemsOf(keyAndCertificate(name, key))).toEqual([]);
  });

  it.each([
    ['rsa-1024', rsa(1024), 'must be an RSA key of 2048 to 4096 bits or an EC key on P-256 or P-384 (this RSA key has 1024 bits)'],
    ['ec-p521', ec('P-521'), 'must be an RSA key of 2048 to 4096 bits or an EC key on P-256 or P-384 (this EC key is on secp521r1)'],
    ['ec-secp256k1', ec('secp256k1'), 'must be an RSA key of 2048 to 4096 bits or an EC key on P-256 or P-384 (this EC key is on secp256k1)'],
    ['ed25519', ['-algorithm', 'ED25519'], 'must be an RSA key of 2048 to 4096 bits or an EC key on P-256 or P-384 (this key is ed25519)'],
  ])('refuses %s, naming auth.private_key', async (name, key, problem) => {
    expect(await problemsOf(keyAndCertificate(name, key))).toEqual([{ path: 'auth.private_key', problem }]);
  });

  it('refuses an accepted kind of key that does not match the certificate', async () => {
    const one = keyAndCertificate('one', ec('P-256'));
    const other = keyAndCertificate('other', ec('P-256'));
    expect(await problemsOf({ certificate: one.certificate, private_key: other.private_key })).toEqual([
      { path: 'auth.private_key', problem: 'does not belong to the certificate' },
    ]);
  });
});
