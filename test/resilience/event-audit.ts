import type { DrillStack } from './drill-stack';

/** What became of the events a drill had accepted: the figures every drill prints. */
export interface Tally {
  accepted: number;
  /** `delivered` in the database and received (answered 2xx) by the receiver. */
  delivered: number;
  /** `failed` after the whole schedule, where the drill allows that outcome. */
  failed: number;
  /** Accepted but neither delivered nor in a final status the drill expects. */
  lost: number;
  /** Extra 2xx deliveries carrying a webhook-id the receiver had already accepted. */
  duplicated: number;
  /** Why each lost event counts as lost, with a few ids to look up. */
  lostReasons: Record<string, { count: number; examples: string[] }>;
  /** Deliveries of ids ingest never accepted (a 503'd event that was stored after all). */
  unacceptedDeliveries: number;
}

export interface FinalExpectation {
  /** When set, `failed` is a correct end for an event that made this many attempts (its full schedule). */
  failedAfterAttempts?: number;
}

interface EventState {
  event_id: string;
  status: string;
  attempts: number;
}

export async function tallyEvents(stack: DrillStack, accepted: Set<string>, expectation: FinalExpectation = {}): Promise<Tally> {
  const rows = await stack.query<EventState>(
    `SELECT e.event_id, d.status, d.attempts FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'`,
  );
  const stored = new Map(rows.map((row) => [row.event_id, row]));
  const deliveries = stack.receiver.deliveries;
  const tally: Tally = { accepted: accepted.size, delivered: 0, failed: 0, lost: 0, duplicated: 0, lostReasons: {}, unacceptedDeliveries: 0 };
  const lose = (reason: string, eventId: string): void => {
    const entry = (tally.lostReasons[reason] ??= { count: 0, examples: [] });
    entry.count += 1;
    if (entry.examples.length < 3) entry.examples.push(eventId);
    tally.lost += 1;
  };

  for (const eventId of accepted) {
    const row = stored.get(eventId);
    const received = deliveries.get(eventId) ?? 0;
    tally.duplicated += Math.max(0, received - 1);
    if (!row) lose('answered 202 but not in the database', eventId);
    else if (row.status === 'delivered' && received > 0) tally.delivered += 1;
    else if (row.status === 'delivered') lose('delivered in the database but never received', eventId);
    else if (row.status !== 'failed') lose(`still ${row.status}`, eventId);
    else if (expectation.failedAfterAttempts === undefined) lose('failed', eventId);
    else if (row.attempts < expectation.failedAfterAttempts) lose(`failed after fewer than ${expectation.failedAfterAttempts} attempts`, eventId);
    else tally.failed += 1;
  }
  for (const eventId of deliveries.keys()) if (!accepted.has(eventId)) tally.unacceptedDeliveries += 1;
  return tally;
}
