import * as ipaddr from 'ipaddr.js';

/** One CIDR block, parsed once: `[address, prefix length]`. */
export type AddressRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * A comma separated list of CIDR blocks (`10.96.0.0/12, fd00::/8`), or the problem with it. A bare
 * address counts as a block of one address.
 */
export function parseAddressRanges(text: string): { ranges: AddressRange[]; problem: string | null } {
  const ranges: AddressRange[] = [];
  for (const item of text.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    try {
      ranges.push(item.includes('/') ? ipaddr.parseCIDR(item) : wholeAddress(ipaddr.parse(item)));
    } catch {
      return { ranges: [], problem: `"${item}" is not an IPv4 or IPv6 CIDR block such as 10.96.0.0/12 or fd00::/8` };
    }
  }
  return { ranges, problem: null };
}

function wholeAddress(address: ipaddr.IPv4 | ipaddr.IPv6): AddressRange {
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}

/**
 * Whether the address is inside any of the ranges. An IPv4-mapped IPv6 address (how a dual-stack socket
 * reports an IPv4 peer) is judged as the IPv4 address it maps.
 */
export function inAddressRanges(address: string, ranges: readonly AddressRange[]): boolean {
  if (ranges.length === 0 || !ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return ranges.some(([base, bits]) => base.kind() === parsed.kind() && parsed.match(base, bits));
}
