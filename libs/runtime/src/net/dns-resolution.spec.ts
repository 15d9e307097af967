import { createSocket, type Socket } from 'node:dgram';
import { configureDns, DEFAULT_DNS_TIMEOUT_MS, DnsTimeoutError, lookupAddresses } from './dns-resolution';
import { checkTargetUrl, guardedLookup } from './target-guard';

/* A DNS server on loopback that takes every question and never answers: slow DNS, made certain. */
let silent: Socket;
let questions = 0;
let servers: string[];

beforeAll(async () => {
  silent = createSocket('udp4');
  silent.on('message', () => {
    questions += 1;
  });
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  servers = [`127.0.0.1:${(silent.address()).port}`];
});

afterAll(() => {
  configureDns({ servers: null, timeoutMs: DEFAULT_DNS_TIMEOUT_MS });
  silent.close();
});

beforeEach(() => configureDns({ servers, timeoutMs: 300 }));

/*
 * What the bounds tell apart: a deadline of 300 ms from no deadline at all (an immediate failure, or the
 * 5 s default). They are wide on purpose: c-ares keeps its own clock and may end a few ms before Node's
 * timer, and a busy machine delays both.
 */
const GAVE_UP_NO_SOONER_THAN_MS = 200;
const GAVE_UP_BEFORE_DEFAULT_MS = DEFAULT_DNS_TIMEOUT_MS - 1000;

async function timed<T>(work: Promise<T>): Promise<{ value: T | Error; ms: number }> {
  const started = Date.now();
  const value = await work.catch((error: Error) => error);
  return { value, ms: Date.now() - started };
}

describe('names resolved with DNS_SERVERS and DNS_TIMEOUT_MS', () => {
  it('gives up on a server that never answers at the deadline, after asking it', async () => {
    const before = questions;
    const { value, ms } = await timed(lookupAddresses('hooks.slow-dns.example'));
    expect(value).toBeInstanceOf(DnsTimeoutError);
    expect((value as DnsTimeoutError).message).toBe('DNS: hooks.slow-dns.example did not resolve within 300 ms');
    expect(ms).toBeGreaterThanOrEqual(GAVE_UP_NO_SOONER_THAN_MS);
    expect(ms).toBeLessThan(GAVE_UP_BEFORE_DEFAULT_MS);
    expect(questions).toBeGreaterThan(before);
  });

  it('refuses to save a target whose name does not resolve in time, saying so (no wait on DNS)', async () => {
    const { value, ms } = await timed(checkTargetUrl('https://hooks.slow-dns.example/in', false));
    expect(value).toBe('did not resolve within 300 ms; try again later');
    expect(ms).toBeLessThan(GAVE_UP_BEFORE_DEFAULT_MS);
  });

  it('fails a connection-time lookup (the socket layer) at the deadline', async () => {
    const { value, ms } = await timed(
      new Promise<void>((resolve, reject) => guardedLookup('hooks.slow-dns.example', {}, (error) => (error ? reject(error) : resolve()))),
    );
    expect(value).toBeInstanceOf(DnsTimeoutError);
    expect(ms).toBeLessThan(GAVE_UP_BEFORE_DEFAULT_MS);
  });

  it('still answers IP literals and localhost without asking the servers', async () => {
    const before = questions;
    expect(await lookupAddresses('203.0.113.7')).toEqual([{ address: '203.0.113.7', family: 4 }]);
    expect((await lookupAddresses('localhost')).map((entry) => entry.address)).toEqual(['127.0.0.1', '::1']);
    expect(questions).toBe(before);
  });
});
