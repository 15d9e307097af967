import type Redis from 'ioredis';

/**
 * Circuit-breaker state of one callback endpoint, shared by every worker through Redis.
 * PLACEHOLDER written with the skeleton: the delivery worker owns this file and fills in the storage.
 */
export interface EndpointState {
  /** closed: delivering; open: not calling until `retry_at`; half_open: one probe in flight. */
  state: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  opened_at: string | null;
  retry_at: string | null;
  last_error: string | null;
}

/** Endpoints are keyed by origin: one receiver host shares one breaker and one concurrency share. */
export function endpointKeyOf(url: string): string {
  return new URL(url).origin;
}

export async function readEndpointState(redis: Redis, prefix: string, url: string): Promise<EndpointState> {
  void redis;
  void prefix;
  void url;
  return Promise.resolve({ state: 'closed', consecutive_failures: 0, opened_at: null, retry_at: null, last_error: null });
}
