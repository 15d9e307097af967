/**
 * Operators' identity (CONTRACT §15): named admin tokens with roles, single sign-on through an OpenID
 * Connect issuer, and how long the audit log is kept. Roles are ordered: each one can do what the one
 * before it can.
 */
export const ADMIN_ROLES = ['viewer', 'operator', 'admin'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

export function isAdminRole(value: string): value is AdminRole {
  return (ADMIN_ROLES as readonly string[]).includes(value);
}

/** True when `held` may do what `needed` may. */
export function roleCovers(held: AdminRole, needed: AdminRole): boolean {
  return ADMIN_ROLES.indexOf(held) >= ADMIN_ROLES.indexOf(needed);
}

export interface NamedAdminToken {
  /** The actor the audit log records for this token. */
  name: string;
  role: AdminRole;
  token: string;
}

export interface OidcSettings {
  issuer: string;
  clientId: string;
  /** null: a public client (PKCE alone). */
  clientSecret: string | null;
  /** The ID token claim the role is read from (OIDC_ROLES_CLAIM). */
  rolesClaim: string;
}

export interface IdentitySettings {
  adminTokens: NamedAdminToken[];
  oidc: OidcSettings | null;
  auditRetentionDays: number;
}

/** A named token is a long-lived credential: shorter than this is refused at start. */
export const MIN_NAMED_TOKEN_LENGTH = 32;
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

type Source = Record<string, string | undefined>;

function trimmed(source: Source, name: string): string | null {
  const value = source[name]?.trim();
  return value ? value : null;
}

/**
 * ADMIN_TOKENS = `name:role:token,…`. A problem names the entry by its place and its name, never by its
 * token: the message is printed at start, where logs keep it.
 */
export function readAdminTokens(source: Source, problems: string[]): NamedAdminToken[] {
  const text = trimmed(source, 'ADMIN_TOKENS');
  if (text === null) return [];
  const tokens: NamedAdminToken[] = [];
  const seen = new Set<string>();
  text.split(',').forEach((raw, index) => {
    const entry = raw.trim();
    const place = `ADMIN_TOKENS entry ${index + 1}`;
    const [name = '', role = '', ...rest] = entry.split(':');
    const token = rest.join(':');
    const named = `${place} ("${name}")`;
    if (!NAME_PATTERN.test(name)) {
      problems.push(`${place} must be name:role:token with a name of letters, digits, ".", "_", "@" or "-" (got a name of "${name}")`);
      return;
    }
    const repeated = seen.has(name);
    seen.add(name);
    if (repeated) {
      problems.push(`${named} repeats the name "${name}": each token needs its own name`);
      return;
    }
    if (!isAdminRole(role)) {
      problems.push(`${named} has an unknown role "${role}": it must be one of ${ADMIN_ROLES.join(', ')}`);
      return;
    }
    if (token.length < MIN_NAMED_TOKEN_LENGTH) {
      problems.push(`${named} has a token shorter than ${MIN_NAMED_TOKEN_LENGTH} characters`);
      return;
    }
    tokens.push({ name, role, token });
  });
  return tokens;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * OIDC_ISSUER and OIDC_CLIENT_ID turn single sign-on on, both or neither. The issuer is https, except
 * on a loopback address (a provider on the same machine, as in tests and local runs).
 */
export function readOidcSettings(source: Source, problems: string[]): OidcSettings | null {
  const issuer = trimmed(source, 'OIDC_ISSUER');
  const clientId = trimmed(source, 'OIDC_CLIENT_ID');
  const clientSecret = trimmed(source, 'OIDC_CLIENT_SECRET');
  const rolesClaim = trimmed(source, 'OIDC_ROLES_CLAIM') ?? 'roles';
  if (issuer === null && clientId === null) {
    if (clientSecret !== null) problems.push('OIDC_CLIENT_SECRET is set but OIDC_ISSUER and OIDC_CLIENT_ID are not');
    return null;
  }
  if (issuer === null) problems.push('OIDC_ISSUER is required when OIDC_CLIENT_ID is set');
  if (clientId === null) problems.push('OIDC_CLIENT_ID is required when OIDC_ISSUER is set');
  if (issuer !== null) {
    try {
      const url = new URL(issuer);
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
        problems.push(`OIDC_ISSUER must be an https URL (http only on a loopback address; got "${issuer}")`);
      }
    } catch {
      problems.push('OIDC_ISSUER is not a valid URL');
    }
  }
  if (!/^[A-Za-z0-9_:./-]{1,200}$/.test(rolesClaim)) problems.push(`OIDC_ROLES_CLAIM must be a claim name (got "${rolesClaim}")`);
  if (issuer === null || clientId === null) return null;
  return { issuer, clientId, clientSecret, rolesClaim };
}

export function readAuditRetentionDays(source: Source, problems: string[]): number {
  const value = trimmed(source, 'AUDIT_RETENTION_DAYS');
  if (value === null) return 365;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 36_500) {
    problems.push(`AUDIT_RETENTION_DAYS must be a whole number from 1 to 36500 (got "${value}")`);
    return 365;
  }
  return Number(value);
}
