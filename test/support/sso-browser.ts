/**
 * A minimal browser for the single sign-on flow without Chromium: follows redirects one by one and keeps
 * cookies per origin (their paths and attributes ignored), so a test can stop at any step, read the
 * Set-Cookie of the config-api's answers, or tamper with the callback.
 */
export class SsoBrowser {
  private readonly jars = new Map<string, Map<string, string>>();
  /** Every Set-Cookie config-api sent, as sent. */
  readonly setCookies: string[] = [];

  constructor(private readonly appOrigin: string) {}

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(origin)?.get(name);
  }

  async get(url: string, init: RequestInit = {}): Promise<Response> {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
    for (const line of response.headers.getSetCookie()) {
      if (origin === this.appOrigin) this.setCookies.push(line);
      const [pair] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      if (/max-age=0\b/i.test(line) || /expires=thu, 01 jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, pair.slice(index + 1).trim());
    }
    return response;
  }

  /** Follows redirects from `url` until one leads to `stopAt` (answered, not followed) or a page answers. */
  async follow(url: string, stopAt: (next: URL) => boolean): Promise<{ stoppedAt: URL | null; response: Response }> {
    let next = new URL(url);
    for (let hop = 0; hop < 20; hop += 1) {
      const response = await this.get(next.href);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || location === null) return { stoppedAt: null, response };
      next = new URL(location, next);
      if (stopAt(next)) return { stoppedAt: next, response };
    }
    throw new Error(`more than 20 redirects from ${url}`);
  }
}
