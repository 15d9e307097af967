import { type AddressRange, parseAddressRanges } from '../net/address-ranges';

/**
 * TRUST_PROXY: which proxies in front of the service may name the client in `X-Forwarded-For`. `hops`:
 * that many proxies, whatever their address; `ranges`: every proxy whose address is inside them.
 */
export type TrustProxy = { hops: number } | { ranges: AddressRange[] };

type Source = Record<string, string | undefined>;

function setting(source: Source, name: string): string | undefined {
  const value = source[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** TRUST_PROXY: unset (the socket's address), a hop count from 1 to 10, or a list of CIDR blocks. */
export function readTrustProxy(source: Source, problems: string[]): TrustProxy | null {
  const value = setting(source, 'TRUST_PROXY');
  if (value === undefined) return null;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops >= 1 && hops <= 10) return { hops };
    problems.push(`TRUST_PROXY must be a hop count from 1 to 10 or a list of CIDR blocks (got "${value}")`);
    return null;
  }
  const { ranges, problem } = parseAddressRanges(value);
  if (problem !== null || ranges.length === 0) {
    problems.push(`TRUST_PROXY must be a hop count from 1 to 10 or a list of CIDR blocks: ${problem ?? 'none given'}`);
    return null;
  }
  return { ranges };
}

/** BLOCKED_TARGET_RANGES: CIDR blocks refused as targets on top of the non-public ones (a cluster's service range). */
export function readBlockedTargetRanges(source: Source, problems: string[]): AddressRange[] {
  const value = setting(source, 'BLOCKED_TARGET_RANGES');
  if (value === undefined) return [];
  const { ranges, problem } = parseAddressRanges(value);
  if (problem !== null) problems.push(`BLOCKED_TARGET_RANGES must be a comma separated list of CIDR blocks: ${problem}`);
  return ranges;
}
