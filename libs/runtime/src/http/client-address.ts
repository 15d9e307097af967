import type { IncomingMessage } from 'node:http';
import type { TrustProxy } from '../config/network-settings';
import { inAddressRanges } from '../net/address-ranges';

function forwardedChain(request: IncomingMessage): string[] {
  const header = request.headers['x-forwarded-for'];
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/**
 * The client's address: the socket's peer, or, with TRUST_PROXY, the address the trusted proxies
 * forwarded. The chain is read from the nearest hop outwards (each proxy appends the address it saw), so
 * a client cannot pick its own address by sending an `X-Forwarded-For` of its own: only entries added by
 * trusted proxies are believed.
 */
export function clientAddress(request: IncomingMessage, trust: TrustProxy | null): string {
  const socketAddress = request.socket.remoteAddress ?? '';
  if (trust === null) return socketAddress;
  // Nearest first: the socket peer, then what it forwarded, right to left.
  const hops = [socketAddress, ...forwardedChain(request).reverse()];
  if ('hops' in trust) return hops[Math.min(trust.hops, hops.length - 1)];
  let index = 0;
  while (index < hops.length - 1 && inAddressRanges(hops[index], trust.ranges)) index += 1;
  return hops[index];
}
