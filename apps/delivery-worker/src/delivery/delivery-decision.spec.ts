import { DESTINATION_DELETED_ERROR } from '@app/persistence';
import { DESTINATION_DELETED, ERASED, standingDecision } from './delivery-decision';
import type { DestinationSettings } from './destinations/destination-settings.cache';
import type { PendingDelivery } from './loading/delivery-loader';

const NOW = Date.parse('2025-01-01T12:00:00Z');

function delivery(overrides: Partial<PendingDelivery> = {}): PendingDelivery {
  return {
    seq: '7',
    destinationId: 'primary',
    accountId: 3,
    status: 'queued',
    attempts: 0,
    series: 0,
    seriesAttempts: 0,
    expiresAt: null,
    eventId: 'evt-7',
    action: 'Customer_create',
    messageText: '{}',
    createdAt: new Date(NOW - 1_000),
    acceptedAt: '2025-01-01 11:59:59+00',
    test: false,
    erased: false,
    open: true,
    subject: null,
    ...overrides,
  };
}

function destination(overrides: Partial<DestinationSettings> = {}): DestinationSettings {
  return {
    accountId: 3,
    id: 'primary',
    type: 'webhook',
    url: 'https://receiver.example/hook',
    shownTarget: 'https://receiver.example/hook',
    auth: null,
    encoding: 'json',
    signingSecret: 'secret',
    previousSigningSecret: null,
    previousSecretExpiresAt: null,
    ordering: 'none',
    maxPerSecond: null,
    paused: false,
    failingSince: null,
    disabledAt: null,
    disabledReason: null,
    deleted: false,
    retry: { scheduleMs: [], stopOn: new Set(), disableOn: new Set() },
    expireAfterMs: null,
    endpointKey: 'k',
    unopenable: null,
    ...overrides,
  };
}

describe('standingDecision: what the loaded rows alone decide', () => {
  it('lets a callable delivery go on', () => {
    expect(standingDecision(delivery(), destination(), NOW)).toBeNull();
  });

  it('ends a deleted destination’s delivery failed with the contract’s words', () => {
    expect(standingDecision(delivery(), destination({ deleted: true }), NOW)).toEqual(DESTINATION_DELETED);
    expect(DESTINATION_DELETED).toMatchObject({ kind: 'end', status: 'failed', why: DESTINATION_DELETED_ERROR });
  });

  it('ends an erased event’s delivery failed, before any other check but deletion', () => {
    expect(standingDecision(delivery({ erased: true, expiresAt: new Date(NOW - 1) }), destination({ paused: true }), NOW)).toEqual(ERASED);
  });

  it('ends a delivery past its deadline expired, naming the destination’s expire_after', () => {
    const passed = standingDecision(delivery({ expiresAt: new Date(NOW) }), destination({ expireAfterMs: 7_200_000 }), NOW);
    expect(passed).toEqual({ kind: 'end', status: 'expired', why: 'expired after 2h', reason: 'expired' });
    expect(standingDecision(delivery({ expiresAt: new Date(NOW + 1) }), destination(), NOW)).toBeNull();
  });

  it('holds a paused destination’s delivery (no status change), even one past its deadline is ended first', () => {
    expect(standingDecision(delivery(), destination({ paused: true }), NOW)).toEqual({ kind: 'hold', hold: 'paused', why: 'paused' });
    expect(standingDecision(delivery({ expiresAt: new Date(NOW - 1) }), destination({ paused: true }), NOW)).toMatchObject({ status: 'expired' });
  });

  it('ends unopenable credentials and a missing push URL without a call', () => {
    expect(standingDecision(delivery(), destination({ unopenable: 'cannot open its credentials' }), NOW)).toEqual({
      kind: 'end',
      status: 'failed',
      why: 'cannot open its credentials',
      reason: 'unsignable',
    });
    expect(standingDecision(delivery(), destination({ url: null }), NOW)).toEqual({ kind: 'end', status: 'no_endpoint', why: 'no push_url is set', reason: 'no_endpoint' });
  });
});
