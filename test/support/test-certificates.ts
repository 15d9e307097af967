import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertificateAuthority {
  certificate: string;
  /** Issues a certificate signed by this authority (server: for 127.0.0.1 and localhost; client: clientAuth). */
  issue(commonName: string, use: 'server' | 'client'): { certificate: string; privateKey: string };
}

/** A throwaway certificate authority made with the real `openssl` (EC keys: fast), in a temp dir removed by `dispose`. */
export function makeCertificateAuthority(name: string): CertificateAuthority & { dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), `ca-${name}-`));
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  const newKey = (file: string): void => run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', file);
  newKey('ca.key');
  run('req', '-x509', '-new', '-key', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=${name} test CA`);
  let serial = 0;
  return {
    certificate: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    issue(commonName, use) {
      serial += 1;
      const base = `${use}-${serial}`;
      newKey(`${base}.key`);
      run('req', '-new', '-key', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${commonName}`);
      writeFileSync(
        join(dir, `${base}.ext`),
        use === 'server' ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' : 'extendedKeyUsage=clientAuth\n',
      );
      run('x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(serial), '-days', '2', '-out', `${base}.pem`, '-extfile', `${base}.ext`);
      return { certificate: readFileSync(join(dir, `${base}.pem`), 'utf8'), privateKey: readFileSync(join(dir, `${base}.key`), 'utf8') };
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
