import { lookup, type LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

/*
 * Every name this service resolves for a target (webhook URLs at save and at connect, broker hosts,
 * OAuth2 token URLs) goes through here, with a deadline: DNS_TIMEOUT_MS. With DNS_SERVERS set, names
 * are asked of those servers with c-ares (Node's own resolver, which waits on no thread); without it,
 * the system's resolver (getaddrinfo) answers, and the deadline bounds the wait. Process-wide like the
 * target guard, set once as an app starts.
 */

export interface DnsSettings {
  /** DNS_SERVERS: `ip` or `ip:port` (IPv6 as `[ip]:port`); null: the system's resolver. */
  servers: string[] | null;
  /** DNS_TIMEOUT_MS: one name's resolution at most. */
  timeoutMs: number;
}

export const DEFAULT_DNS_TIMEOUT_MS = 5000;

let settings: DnsSettings = { servers: null, timeoutMs: DEFAULT_DNS_TIMEOUT_MS };
let resolver: Resolver | null = null;

/** A name that did not resolve within DNS_TIMEOUT_MS (`code` ETIMEOUT, as the resolvers' own time-outs). */
export class DnsTimeoutError extends Error {
  readonly code = 'ETIMEOUT';
  constructor(readonly hostname: string, readonly timeoutMs: number) {
    super(`DNS: ${hostname} did not resolve within ${timeoutMs} ms`);
    this.name = 'DnsTimeoutError';
  }
}

/** Null when `servers` is a list c-ares takes, else the problem (for the settings check). */
export function dnsServersProblem(servers: string[]): string | null {
  try {
    new Resolver().setServers(servers);
    return null;
  } catch {
    return 'must be a comma-separated list of IP addresses, each with an optional :port ([ipv6]:port)';
  }
}

export function configureDns(next: DnsSettings): void {
  settings = next;
  resolver = null;
  if (next.servers && next.servers.length > 0) {
    resolver = new Resolver({ timeout: next.timeoutMs, tries: 1 });
    resolver.setServers(next.servers);
  }
}

export function dnsSettings(): DnsSettings {
  return settings;
}

/** `localhost` and its subdomains are loopback by definition (RFC 6761 §6.3); c-ares asks no hosts file. */
function loopbackOf(hostname: string): LookupAddress[] | null {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost')
    ? [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]
    : null;
}

async function askServers(active: Resolver, hostname: string): Promise<LookupAddress[]> {
  const [v4, v6] = await Promise.allSettled([active.resolve4(hostname), active.resolve6(hostname)]);
  const addresses: LookupAddress[] = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (addresses.length > 0) return addresses;
  const reason = v4.status === 'rejected' ? (v4.reason as unknown) : v6.status === 'rejected' ? (v6.reason as unknown) : null;
  throw reason instanceof Error ? reason : Object.assign(new Error(`DNS: ${hostname} has no address`), { code: 'ENOTFOUND' });
}

function askSystem(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/** Every address of `hostname` (an IP literal is its own), or DnsTimeoutError past DNS_TIMEOUT_MS, or the resolver's error. */
export async function lookupAddresses(hostname: string): Promise<LookupAddress[]> {
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family }];
  const active = resolver;
  if (active) {
    const loopback = loopbackOf(hostname);
    if (loopback) return loopback;
  }
  const { timeoutMs } = settings;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DnsTimeoutError(hostname, timeoutMs)), timeoutMs);
  });
  const asked = active ? askServers(active, hostname) : askSystem(hostname);
  asked.catch(() => undefined);
  try {
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A drop-in for `dns.lookup` given to the socket layer (undici's `connect.lookup`, `net.connect`), with
 * the deadline and servers above; `check` may refuse the answer (the target guard's public-address rule).
 */
export function deadlineLookup(check?: (hostname: string, addresses: LookupAddress[]) => Error | null) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    lookupAddresses(hostname).then(
      (addresses) => {
        const refused = check?.(hostname, addresses) ?? null;
        if (refused) return callback(refused, []);
        const wanted = (options as { family?: number }).family;
        const usable = wanted === 4 || wanted === 6 ? addresses.filter((entry) => entry.family === wanted) : addresses;
        if (usable.length === 0) return callback(Object.assign(new Error(`DNS: ${hostname} has no IPv${wanted} address`), { code: 'ENOTFOUND' }), []);
        if ((options as { all?: boolean }).all) return callback(null, usable);
        return callback(null, usable[0].address, usable[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
