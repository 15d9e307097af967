/**
 * The admin token lives in this tab's sessionStorage only (gone when the tab closes, never shared with
 * other tabs, never in a URL or cookie). Listeners hear when it is set or dropped.
 */
let KEY = 'admin-token';
/** What a refused token is called on screen. */
export let refusedMessage = 'The admin token was refused; sign in again.';

/** The account portal keeps its session token under a key of its own, so the two never mix in a tab. */
export function useSessionKey(key: string, refused: string): void {
  KEY = key;
  refusedMessage = refused;
}

const listeners = new Set<() => void>();

export function currentToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function signIn(token: string): void {
  sessionStorage.setItem(KEY, token);
  listeners.forEach((listener) => listener());
}

/** `reason` is shown on the sign-in page (e.g. the token was refused mid-session). */
export let signOutReason: string | null = null;

export function signOut(reason: string | null = null): void {
  signOutReason = reason;
  identity = null;
  sessionStorage.removeItem(KEY);
  listeners.forEach((listener) => listener());
}

/**
 * Who the console is signed in as (GET /admin/v1/session): with a token, or with single sign-on, whose
 * session is an HttpOnly cookie this script never sees; its `csrf_token` goes with every write.
 */
export interface ConsoleIdentity {
  actor: string;
  role: 'viewer' | 'operator' | 'admin';
  via: 'token' | 'oidc';
  csrf_token: string | null;
}

let identity: ConsoleIdentity | null = null;

export function currentIdentity(): ConsoleIdentity | null {
  return identity;
}

export function setIdentity(next: ConsoleIdentity): void {
  identity = next;
  listeners.forEach((listener) => listener());
}

const RANK = { viewer: 0, operator: 1, admin: 2 } as const;

/** Whether the signed-in role may do what `needed` may (the console hides what it may not). */
export function roleAllows(needed: ConsoleIdentity['role']): boolean {
  return identity !== null && RANK[identity.role] >= RANK[needed];
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
