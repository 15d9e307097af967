import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import * as ipaddr from 'ipaddr.js';
import { type AddressRange, inAddressRanges } from './address-ranges';
import { deadlineLookup, DnsTimeoutError, lookupAddresses } from './dns-resolution';

export const MAX_TARGET_URL_LENGTH = 2048;

/**
 * Why a target is refused, in one text whatever the reason (a non-public address, or a name that does
 * not resolve), naming no address: API users must not learn what an internal name resolves to (CONTRACT §2).
 */
export const TARGET_REFUSED_PROBLEM = 'points to a non-public address or to a host that does not resolve';

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 addresses an IPv6 address carries, by the transition schemes that route to them: IPv4-compatible
 * (::a.b.c.d, the WHATWG URL parser writes `[::127.0.0.1]` as `[::7f00:1]`), IPv4-mapped (::ffff:0:0/96),
 * SIIT (::ffff:0:0:0/96), NAT64's well-known prefix (64:ff9b::/96), 6to4 (2002::/16) and Teredo
 * (2001::/32: its server, and its client stored inverted). Null for any other address.
 */
export function carriedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = address.parts;
  const zeros = (from: number, to: number): boolean => p.slice(from, to).every((part) => part === 0);
  if (zeros(0, 6) || (zeros(0, 5) && p[5] === 0xffff) || (zeros(0, 4) && p[4] === 0xffff && p[5] === 0)) return [ipv4Of(p[6], p[7])];
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return [ipv4Of(p[6], p[7])];
  if (p[0] === 0x2002) return [ipv4Of(p[1], p[2])];
  if (p[0] === 0x2001 && p[1] === 0) return [ipv4Of(p[2], p[3]), ipv4Of(~p[6] & 0xffff, ~p[7] & 0xffff)];
  return null;
}

/**
 * BLOCKED_TARGET_RANGES of this process: addresses that look public but are not (a cluster's service
 * range, IPv6 ULA in use). Process-wide, as the DNS hook that checks every dialled address has no other
 * way to learn them; RuntimeConfigModule sets it from the environment when an app starts.
 */
let extraBlockedRanges: readonly AddressRange[] = [];

export function blockTargetRanges(ranges: readonly AddressRange[]): void {
  extraBlockedRanges = ranges;
}

function isPublicIpv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast' && !inAddressRanges(address.toString(), extraBlockedRanges);
}

/**
 * True only for globally routable unicast addresses outside BLOCKED_TARGET_RANGES; an IPv6 address
 * carrying IPv4 is judged as the IPv4 it carries.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return isPublicIpv4(parsed as ipaddr.IPv4);
  const carried = carriedIpv4(parsed as ipaddr.IPv6);
  if (carried) return carried.every(isPublicIpv4);
  return parsed.range() === 'unicast' && !inAddressRanges(address, extraBlockedRanges);
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
  if (!allowPrivateTargets && isIP(host) && !isPublicAddress(host)) return TARGET_REFUSED_PROBLEM;
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
    addresses = await lookupAddresses(host);
  } catch (error) {
    // Slow DNS is not a verdict on the host: say so, and keep the save from waiting on it.
    if (error instanceof DnsTimeoutError) return `did not resolve within ${error.timeoutMs} ms; try again later`;
    return TARGET_REFUSED_PROBLEM;
  }
  return addresses.every((entry) => isPublicAddress(entry.address)) ? null : TARGET_REFUSED_PROBLEM;
}

/**
 * A drop-in for `dns.lookup` given to the socket layer: it refuses non-public answers, so the address
 * actually dialled is the one checked (DNS rebinding between check and connect does not get through),
 * and answers within DNS_TIMEOUT_MS.
 */
export const guardedLookup = deadlineLookup((hostname, addresses) =>
  // The address is not named: the error reaches the attempt log, which API users read.
  addresses.every((entry) => isPublicAddress(entry.address)) ? null : new TargetRefusedError(`${hostname} resolves to a non-public address`),
);

/** `dns.lookup` with DNS_TIMEOUT_MS and DNS_SERVERS, for sockets to targets when private ones are allowed. */
export const boundedLookup = deadlineLookup();

/**
 * What a log line may carry of a target URL: its origin. The path and query of a push URL often hold the
 * receiver's own secret (`…/hook?token=…`), which logs must not spread.
 */
export function loggableUrl(url: string | null | undefined): string {
  if (!url) return '?';
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}
