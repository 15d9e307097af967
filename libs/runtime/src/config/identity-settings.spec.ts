import { loadEnvironment, EnvironmentError } from './environment';
import { readAdminTokens, readOidcSettings, roleCovers } from './identity-settings';

const LONG = 'x'.repeat(32);

function problemsOf(source: Record<string, string>): string[] {
  try {
    loadEnvironment({ ADMIN_TOKEN: 'a'.repeat(20), ...source });
    return [];
  } catch (error) {
    if (error instanceof EnvironmentError) return error.problems;
    throw error;
  }
}

describe('identity settings', () => {
  it('reads named tokens with their roles; a token may hold colons', () => {
    const problems: string[] = [];
    expect(readAdminTokens({ ADMIN_TOKENS: ` ada:viewer:${LONG} , ci.bot:operator:${LONG}:tail` }, problems)).toEqual([
      { name: 'ada', role: 'viewer', token: LONG },
      { name: 'ci.bot', role: 'operator', token: `${LONG}:tail` },
    ]);
    expect(problems).toEqual([]);
  });

  it('stops the start on a short token, a repeated name or an unknown role, naming the entry but never the token', () => {
    const short = 'short-secret-token';
    const problems = problemsOf({ ADMIN_TOKENS: `ada:viewer:${short},bob:root:${LONG},ada:admin:${LONG}` });
    expect(problems).toEqual([
      'ADMIN_TOKENS entry 1 ("ada") has a token shorter than 32 characters',
      'ADMIN_TOKENS entry 2 ("bob") has an unknown role "root": it must be one of viewer, operator, admin',
      'ADMIN_TOKENS entry 3 ("ada") repeats the name "ada": each token needs its own name',
    ]);
    expect(problems.join('\n')).not.toContain(short);
    expect(problemsOf({ ADMIN_TOKENS: `${LONG}` })[0]).toMatch(/^ADMIN_TOKENS entry 1 \(".*"\) has an unknown role ""/);
  });

  it('turns single sign-on on with an issuer and a client id, both or neither', () => {
    expect(readOidcSettings({}, [])).toBeNull();
    expect(readOidcSettings({ OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'console' }, [])).toEqual({
      issuer: 'https://id.example.com',
      clientId: 'console',
      clientSecret: null,
      rolesClaim: 'roles',
    });
    expect(problemsOf({ OIDC_ISSUER: 'https://id.example.com' })).toEqual(['OIDC_CLIENT_ID is required when OIDC_ISSUER is set']);
    expect(problemsOf({ OIDC_ISSUER: 'http://id.example.com', OIDC_CLIENT_ID: 'c' })[0]).toMatch(/^OIDC_ISSUER must be an https URL/);
    expect(problemsOf({ OIDC_ISSUER: 'http://127.0.0.1:4000', OIDC_CLIENT_ID: 'c' })).toEqual([]);
    expect(problemsOf({ AUDIT_RETENTION_DAYS: '0' })).toEqual(['AUDIT_RETENTION_DAYS must be a whole number from 1 to 36500 (got "0")']);
  });

  it('orders the roles', () => {
    expect(roleCovers('admin', 'operator')).toBe(true);
    expect(roleCovers('operator', 'operator')).toBe(true);
    expect(roleCovers('viewer', 'operator')).toBe(false);
  });
});
