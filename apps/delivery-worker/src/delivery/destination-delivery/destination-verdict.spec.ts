import { destinationEndpointKey, endpointOrigin } from '@app/runtime';
import { verdictOf } from './destination-delivery.service';

describe('verdictOf (a transport outcome in the retry policy’s words)', () => {
  it('is a success for ok, with the breaker told so', () => {
    expect(verdictOf({ ok: true, durationMs: 3, status: 204 }, 0)).toMatchObject({ success: true, breakerSignal: 'success', error: null });
  });

  it('classifies an HTTP answer like the primary’s, keeping the transport’s reason and Retry-After', () => {
    expect(verdictOf({ ok: false, durationMs: 3, status: 500, reason: 'HTTP 500: server error' }, 0)).toMatchObject({
      success: false,
      failureClass: 'retryable',
      breakerSignal: 'failure',
      error: 'HTTP 500: server error',
    });
    expect(verdictOf({ ok: false, durationMs: 3, status: 429, reason: 'HTTP 429: too many requests', retryAfterMs: 2000 }, 0)).toMatchObject({
      failureClass: 'throttled',
      retryAfterMs: 2000,
    });
    expect(verdictOf({ ok: false, durationMs: 3, status: 400, reason: 'HTTP 400: rejected' }, 0)).toMatchObject({ failureClass: 'permanent' });
  });

  it('treats a broker refusal, time-out or lost connection as a retryable failure of the destination', () => {
    expect(verdictOf({ ok: false, durationMs: 10_000, reason: 'time-out: no confirm within 10000 ms' }, 0)).toEqual({
      success: false,
      failureClass: 'retryable',
      breakerSignal: 'failure',
      retryAfterMs: null,
      error: 'time-out: no confirm within 10000 ms',
    });
  });
});

describe('destinationEndpointKey', () => {
  it('names the destination, not its URL, and keeps a web origin for the politeness cap', () => {
    expect(destinationEndpointKey(7, 'dst_abc', 'https://hooks.example.com/a?b=1')).toBe('https://hooks.example.com|7|dest:dst_abc');
    expect(endpointOrigin(destinationEndpointKey(7, 'dst_abc', 'https://hooks.example.com/a'))).toBe('https://hooks.example.com');
  });

  it('never carries a broker’s credentials', () => {
    const key = destinationEndpointKey(7, 'dst_abc', 'amqp://user:s3cret@broker.example.com:5672/vhost');
    expect(key).toBe('amqp://broker.example.com:5672|7|dest:dst_abc');
    expect(key).not.toContain('s3cret');
  });
});
