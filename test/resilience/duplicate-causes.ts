import type { DrillReceiver } from './drill-receiver';
import type { DrillStack } from './drill-stack';

/** A fault a drill caused, and when (epoch ms). */
export interface FaultMark {
  name: string;
  at: number;
  /** A worker SIGKILLed: the calls it had made but not yet recorded are made again. */
  workerKill: boolean;
}

/**
 * How long before a worker's SIGKILL a call may have been answered and still be unrecorded: above the
 * worst call-to-commit lag seen on a busy 2-core machine (recordLag prints it for every run).
 */
export const KILL_WINDOW_MS = 5_000;
/** A SIGKILL takes a moment to land: a call answered just after the drill sent it was not recorded either. */
const KILL_LANDING_MS = 1_000;

/**
 * The extra deliveries a worker's SIGKILL does not explain. Explained: one of the event's 2xx calls is
 * recorded (the first one's outcome was never written; failed calls before it, such as a receiver's
 * deliberate 500, are recorded and do not count), its first delivery came at most KILL_WINDOW_MS before
 * a worker was killed and its second after. Anything else (two recorded 2xx calls, a first delivery
 * long before any kill) is a second live job or a race, which at least once does not excuse.
 */
export function unexplainedRepeats(repeats: DrillReceiver['repeats'], faults: FaultMark[], recordedDeliveries: Map<string, number>): DrillReceiver['repeats'] {
  return repeats.filter(
    (repeat) =>
      recordedDeliveries.get(repeat.id) !== 1 ||
      !faults.some(
        (fault) => fault.workerKill && fault.at + KILL_LANDING_MS >= repeat.firstAt && fault.at <= repeat.at && fault.at - repeat.firstAt <= KILL_WINDOW_MS,
      ),
  );
}

function span(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (share: number): number => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
  return `${sorted[0]}–${sorted[sorted.length - 1]} ms (median ${at(0.5)})`;
}

/**
 * Where the extra deliveries come from, as far as the drill can see. Each is grouped by the faults
 * between its two deliveries (one of them left the first call unrecorded), or, with none between, by
 * the last fault before the first (a race after it: e.g. a job still in a worker when its Redis copy
 * was lost, re-enqueued by the reconciler). `recordedCalls`: attempt rows of each duplicated event: 2
 * means both calls were made by live workers and recorded (two jobs of one step at once); 1 means the
 * first call's outcome was never written (its worker died before the commit).
 */
export function attributeRepeats(repeats: DrillReceiver['repeats'], faults: FaultMark[], start: number, recordedCalls: Map<string, number>): string[] {
  const when = (fault: FaultMark): string => `${fault.name} (at ${((fault.at - start) / 1000).toFixed(1)} s)`;
  const groups = new Map<string, { relative: number[]; gaps: number[]; between: boolean; recorded: Map<number, number> }>();
  for (const repeat of repeats) {
    const between = faults.filter((fault) => fault.at + (fault.workerKill ? KILL_LANDING_MS : 0) > repeat.firstAt && fault.at <= repeat.at);
    const before = faults.filter((fault) => fault.at <= repeat.firstAt && !between.includes(fault)).at(-1);
    const name = between.length > 0 ? `across ${between.map(when).join(', ')}` : `with no fault between, after ${before ? when(before) : 'no fault at all'}`;
    const group = groups.get(name) ?? { relative: [], gaps: [], between: between.length > 0, recorded: new Map<number, number>() };
    const fault = between[0] ?? before;
    if (fault) group.relative.push(between.length > 0 ? fault.at - repeat.firstAt : repeat.firstAt - fault.at);
    group.gaps.push(repeat.at - repeat.firstAt);
    const recorded = recordedCalls.get(repeat.id) ?? 0;
    group.recorded.set(recorded, (group.recorded.get(recorded) ?? 0) + 1);
    groups.set(name, group);
  }
  return [...groups].map(([name, { relative, gaps, between, recorded }]) => {
    const first = relative.length === 0 ? '' : `first delivery ${span(relative)} ${between ? 'before the first of them' : 'after it'}, `;
    const records = [...recorded].sort(([a], [b]) => a - b).map(([calls, count]) => `${count} with ${calls} recorded`).join(', ');
    return `duplicates ${name}: ${gaps.length}; ${first}second ${span(gaps)} after the first; attempt rows: ${records}`;
  });
}

/**
 * Attempt rows (recorded calls) of each of the given events, those of them answered 2xx (recorded
 * deliveries), and why the recorded calls before the last one failed.
 */
export async function recordedCallsOf(
  stack: DrillStack,
  eventIds: string[],
): Promise<{ calls: Map<string, number>; deliveries: Map<string, number>; earlierFailures: string[] }> {
  const rows = await stack.query<{ event_id: string; error: string | null; last: boolean; delivered: boolean }>(
    `SELECT e.event_id, a.error, a.attempt = max(a.attempt) OVER (PARTITION BY e.seq) AS last,
            COALESCE(a.response_status BETWEEN 200 AND 299, false) AS delivered
       FROM events e JOIN delivery_attempts a ON a.event_seq = e.seq AND a.destination_id = 'primary' WHERE e.event_id = ANY($1)`,
    [eventIds],
  );
  const calls = new Map<string, number>();
  const deliveries = new Map<string, number>();
  const failures = new Map<string, number>();
  for (const row of rows) {
    calls.set(row.event_id, (calls.get(row.event_id) ?? 0) + 1);
    if (row.delivered) deliveries.set(row.event_id, (deliveries.get(row.event_id) ?? 0) + 1);
    if (row.last) continue;
    const reason = (row.error ?? 'no error').split(':')[0];
    failures.set(reason, (failures.get(reason) ?? 0) + 1);
  }
  return { calls, deliveries, earlierFailures: [...failures].map(([reason, count]) => `${count}× ${reason}`) };
}

function percentiles(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (share: number): number => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms, max ${sorted[sorted.length - 1]} ms`;
}

/**
 * How long a delivered call waited for its outcome to commit: from the receiver's 2xx to the commit of
 * the event's `delivered` primary delivery (PostgreSQL's commit timestamps), and the part of it from the end of the
 * call as the worker timed it (its attempt row) to that commit. A worker SIGKILLed inside this window
 * has made calls nobody recorded; they are made again, so this window is what each kill costs.
 */
export async function recordLag(stack: DrillStack, receiver: DrillReceiver): Promise<string> {
  const rows = await stack.query<{ event_id: string; committed_ms: number; call_end_ms: number }>(
    `SELECT e.event_id, (extract(epoch FROM pg_xact_commit_timestamp(d.xmin)) * 1000)::float8 AS committed_ms,
            (extract(epoch FROM a.started_at) * 1000 + a.duration_ms)::float8 AS call_end_ms
       FROM events e
       JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
       JOIN delivery_attempts a ON a.event_seq = e.seq AND a.destination_id = 'primary' AND a.attempt = d.attempts
      WHERE d.status = 'delivered'`,
  );
  const fromReceiver: number[] = [];
  const fromCallEnd: number[] = [];
  for (const row of rows) {
    const delivered = receiver.firstDeliveredAt.get(row.event_id);
    if (delivered === undefined || (receiver.deliveries.get(row.event_id) ?? 0) !== 1) continue;
    fromReceiver.push(Math.round(row.committed_ms - delivered));
    fromCallEnd.push(Math.round(row.committed_ms - row.call_end_ms));
  }
  if (fromReceiver.length === 0) return 'call-to-commit lag: no delivered event to measure';
  return (
    `call-to-commit lag over ${fromReceiver.length} events: receiver's 2xx to the delivered row's commit ${percentiles(fromReceiver)}; ` +
    `of which the worker's end of the call to the commit ${percentiles(fromCallEnd)}`
  );
}
