import type { Request, Response } from 'express';

/** The console's session cookie and the short-lived one that ties a sign-in to the browser that started it. */
export const SESSION_COOKIE = 'admin_session';
export const SIGN_IN_COOKIE = 'admin_signin';
/** CONTRACT §15: a session lasts at most 8 hours. */
export const SESSION_TTL_SECONDS = 8 * 3600;
export const SIGN_IN_TTL_SECONDS = 600;

/** One cookie of the request, or null (no cookie-parser: this is the only place cookies are read). */
export function cookieOf(request: Request, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      const value = part.slice(index + 1).trim();
      return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

/**
 * HttpOnly (no script reads it), SameSite=Lax (sent on the issuer's redirect back, not on other sites'
 * writes), Secure when PUBLIC_URL is https, and scoped to the console's path under PUBLIC_URL.
 */
export function setCookie(response: Response, publicUrl: string, name: string, value: string, maxAgeSeconds: number): void {
  const url = new URL(publicUrl);
  const path = `${url.pathname.replace(/\/+$/, '')}/admin`;
  const secure = url.protocol === 'https:' ? '; Secure' : '';
  response.append('Set-Cookie', `${name}=${value}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`);
}

export function clearCookie(response: Response, publicUrl: string, name: string): void {
  setCookie(response, publicUrl, name, 'x'.repeat(16), 0);
}
