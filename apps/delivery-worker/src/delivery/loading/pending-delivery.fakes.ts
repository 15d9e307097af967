import type { PendingDelivery } from './delivery-loader';

/** A primary delivery waiting for its first attempt, as the loader reads it: the specs' common starting point. */
export function pendingDelivery(overrides: Partial<PendingDelivery> = {}): PendingDelivery {
  return {
    seq: '1042',
    destinationId: 'primary',
    accountId: 7,
    status: 'queued',
    attempts: 0,
    series: 1,
    seriesAttempts: 0,
    expiresAt: new Date('2025-01-02T12:00:00Z'),
    eventId: 'evt-1',
    action: 'order.created',
    messageText: '{"id":1}',
    createdAt: new Date('2025-01-01T11:59:59.123Z'),
    acceptedAt: '2025-01-01 11:59:59.123456+00',
    test: false,
    erased: false,
    open: true,
    subject: 'order-9',
    ...overrides,
  };
}
