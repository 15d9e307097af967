import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * The Content-Security-Policy of every response, pages and API alike. Scripts and styles come only from
 * files this origin serves (no inline scripts or `eval`); scripts may still set styles through the CSSOM,
 * which charting code does. Not framable, no plugins, no `<base>` rewriting, forms post only here.
 * `upgrade-insecure-requests` is left out on purpose: the console must work over plain http on loopback.
 */
export const CONTENT_SECURITY_POLICY_DIRECTIVES: Readonly<Record<string, readonly string[]>> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/**
 * One middleware for every app's security headers (helmet): the CSP above, `nosniff`,
 * `Referrer-Policy: no-referrer` and `X-Frame-Options: DENY` for browsers that predate frame-ancestors.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: Object.fromEntries(Object.entries(CONTENT_SECURITY_POLICY_DIRECTIVES).map(([name, values]) => [name, [...values]])),
    },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
  });
}
