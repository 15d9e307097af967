import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface TestOidcProvider {
  issuer: string;
  /** The user the next sign-in at the provider is, with the claims of their ID token. */
  nextUser(sub: string, claims: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

export interface TestOidcClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'none';
}

/** Starts oidc-provider (test/support/oidc-provider-server.mjs) as a child process on a loopback port. */
export async function startOidcProvider(client: TestOidcClient): Promise<TestOidcProvider> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'oidc-provider-server.mjs'), JSON.stringify({ grant_types: ['authorization_code'], response_types: ['code'], ...client })], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('the OIDC provider did not start within 20 s')), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { issuer: string }).issuer);
    });
    child.once('exit', (code) => reject(new Error(`the OIDC provider exited with ${code}`)));
  });
  return {
    issuer,
    async nextUser(sub, claims) {
      const response = await fetch(`${issuer}/test/next-user`, { method: 'POST', body: JSON.stringify({ sub, claims }) });
      if (response.status !== 204) throw new Error(`next-user answered ${response.status}`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
