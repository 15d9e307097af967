import type { IncomingMessage } from 'node:http';
import { parseAddressRanges } from '../net/address-ranges';
import { clientAddress } from './client-address';

function request(socket: string, forwarded?: string): IncomingMessage {
  return { socket: { remoteAddress: socket }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } } as unknown as IncomingMessage;
}

describe('clientAddress', () => {
  it('is the socket address without TRUST_PROXY, whatever the header says', () => {
    expect(clientAddress(request('10.0.0.9', '203.0.113.1'), null)).toBe('10.0.0.9');
  });

  it('takes the entry as many hops from the socket as TRUST_PROXY counts', () => {
    expect(clientAddress(request('10.0.0.9', 'spoofed, 203.0.113.1'), { hops: 1 })).toBe('203.0.113.1');
    expect(clientAddress(request('10.0.0.9', 'spoofed, 203.0.113.1, 10.0.0.8'), { hops: 2 })).toBe('203.0.113.1');
    // Fewer entries than hops: the farthest there is.
    expect(clientAddress(request('10.0.0.9'), { hops: 2 })).toBe('10.0.0.9');
  });

  it('skips the proxies inside the trusted ranges, and believes nothing past the first other address', () => {
    const trust = { ranges: parseAddressRanges('10.0.0.0/8').ranges };
    expect(clientAddress(request('10.0.0.9', '198.51.100.5, 203.0.113.1, 10.1.1.1'), trust)).toBe('203.0.113.1');
    expect(clientAddress(request('::ffff:10.0.0.9', '203.0.113.1'), trust)).toBe('203.0.113.1');
    expect(clientAddress(request('198.51.100.9', '203.0.113.1'), trust)).toBe('198.51.100.9');
  });
});

describe('parseAddressRanges', () => {
  it('reads CIDR blocks and bare addresses, and names a bad item', () => {
    expect(parseAddressRanges('10.96.0.0/12, fd00::/8,192.0.2.1').ranges).toHaveLength(3);
    expect(parseAddressRanges('10.96.0.0/12,nope').problem).toMatch(/"nope" is not/);
    expect(parseAddressRanges('10.0.0.0/33').problem).toMatch(/10.0.0.0\/33/);
  });
});
