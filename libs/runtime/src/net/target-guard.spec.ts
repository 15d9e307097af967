import { parseAddressRanges } from './address-ranges';
import { blockTargetRanges, checkTargetUrl, describeUrlProblem, guardedLookup, isPublicAddress, TARGET_REFUSED_PROBLEM } from './target-guard';

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['2001:4860:4860::8888', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    // IPv4-compatible, as written and as the WHATWG URL parser rewrites it
    ['::127.0.0.1', false],
    ['::7f00:1', false],
    ['::a00:1', false],
    ['::808:808', true],
    // IPv4-mapped and SIIT
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:808:808', true],
    ['::ffff:0:7f00:1', false],
    ['::ffff:0:c0a8:101', false],
    // NAT64 well-known prefix
    ['64:ff9b::7f00:1', false],
    ['64:ff9b::169.254.169.254', false],
    ['64:ff9b::808:808', true],
    // 6to4
    ['2002:7f00:1::', false],
    ['2002:c0a8:101::1', false],
    ['2002:808:808::1', true],
    // Teredo: public server 65.54.227.120; client stored inverted (~127.0.0.1 = 80ff:fffe, ~10.0.0.1 = f5ff:fffe)
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', false],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', false],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it('refuses BLOCKED_TARGET_RANGES too, however the address is written', () => {
    blockTargetRanges(parseAddressRanges('8.8.8.0/24,2001:4860::/32').ranges);
    try {
      for (const address of ['8.8.8.8', '::ffff:8.8.8.8', '64:ff9b::808:808', '2001:4860::8888']) expect(isPublicAddress(address)).toBe(false);
      expect(isPublicAddress('8.8.4.4')).toBe(true);
    } finally {
      blockTargetRanges([]);
    }
  });
});

describe('refusals name no address and do not tell the reasons apart', () => {
  it.each(['http://[::127.0.0.1]/x', 'http://[::ffff:10.0.0.1]/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/', 'http://127.0.0.1:9/'])(
    'refuses the literal %s at set_url time',
    (url) => {
      expect(describeUrlProblem(url, false)).toBe(TARGET_REFUSED_PROBLEM);
      expect(describeUrlProblem(url, true)).toBeNull();
    },
  );

  it('answers a name that resolves to loopback exactly as one that does not resolve', async () => {
    expect(await checkTargetUrl('http://localhost:8080/hook', false)).toBe(TARGET_REFUSED_PROBLEM);
    expect(await checkTargetUrl('http://no-such-host.invalid/hook', false)).toBe(TARGET_REFUSED_PROBLEM);
    expect(TARGET_REFUSED_PROBLEM).not.toMatch(/\d+\.\d+|::/);
  });

  it('refuses at connect time without naming the address', async () => {
    const error = await new Promise<Error | null>((resolve) => guardedLookup('localhost', {}, (failure) => resolve(failure)));
    expect(error?.message).toBe('localhost resolves to a non-public address');
  });
});
