import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  certificate: string;
  privateKey: string;
}

/** A fresh self-signed client certificate and its PKCS#8 key (P-256), made by the system's openssl. */
export function makeTestCertificate(commonName = 'callbacks-test-client'): TestCertificate {
  const directory = mkdtempSync(join(tmpdir(), 'cert-'));
  try {
    const keyFile = join(directory, 'key.pem');
    const certificateFile = join(directory, 'certificate.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certificateFile, '-days', '2', '-subj', `/CN=${commonName}`],
      { stdio: 'ignore' },
    );
    return { certificate: readFileSync(certificateFile, 'utf8'), privateKey: readFileSync(keyFile, 'utf8') };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
