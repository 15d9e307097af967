import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { isIP } from 'node:net';
import * as ipaddr from 'ipaddr.js';

export const MAX_TARGET_URL_LENGTH = 2048;

const lookupAll = promisify(dnsLookup);

/** True only for globally routable unicast addresses (IPv4-mapped IPv6 is judged as the IPv4 it carries). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}

export class TargetRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

function stripBrackets(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Checks what can be known from the text alone: an http(s) URL, no credentials, not too long, and,
 * when the host is an IP literal, a public one. Returns the problem, or null when the URL is acceptable.
 */
export function describeUrlProblem(url: unknown, allowPrivateTargets: boolean): string | null {
  if (typeof url !== 'string' || url.trim() === '') return 'must be a non-empty string';
  if (url.length > MAX_TARGET_URL_LENGTH) return `must be at most ${MAX_TARGET_URL_LENGTH} characters long`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must use http or https';
  if (parsed.username || parsed.password) return 'must not contain credentials';
  if (!parsed.hostname) return 'has no host';
  const host = stripBrackets(parsed.hostname);
  if (!allowPrivateTargets && isIP(host) && !isPublicAddress(host)) {
    return `points to a non-public address (${host})`;
  }
  return null;
}

/**
 * The full check used when a URL is configured: the text, then every address its name resolves to.
 * The same rule runs again at connect time (see guardedLookup), so a later DNS change cannot slip past.
 */
export async function checkTargetUrl(url: unknown, allowPrivateTargets: boolean): Promise<string | null> {
  const problem = describeUrlProblem(url, allowPrivateTargets);
  if (problem || allowPrivateTargets) return problem;
  const host = stripBrackets(new URL(url as string).hostname);
  if (isIP(host)) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host, { all: true });
  } catch {
    return `host ${host} cannot be resolved`;
  }
  const refused = addresses.find((entry) => !isPublicAddress(entry.address));
  return refused ? `host ${host} resolves to a non-public address (${refused.address})` : null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A drop-in for `dns.lookup` given to the socket layer: it refuses non-public answers, so the address
 * actually dialled is the one checked (DNS rebinding between check and connect does not get through).
 */
export function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) {
      const refusal = new TargetRefusedError(`${hostname} resolves to a non-public address (${refused.address})`);
      return callback(refusal, []);
    }
    if ((options as { all?: boolean }).all) return callback(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
}
