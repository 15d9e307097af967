/** The one line per attempt a developer reads at a glance: time, event id, action, answer and milliseconds. */
import type { FeedItem } from './feed.js';
import { RETRY_DELAYS_MS, type Attempt } from './forward.js';

function clock(at: Date): string {
  const two = (value: number): string => String(value).padStart(2, '0');
  return `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${String(at.getMilliseconds()).padStart(3, '0')}`;
}

/**
 * `14:03:07.412  evt_01J…  Customer_create  → 200  12 ms`, and when it failed
 * `… → 503  8 ms  (again in 1 s)` or `… → connection refused  1 ms  (gave up after 4 attempts: event-callbacks replay evt_…)`.
 */
export function attemptLine(item: FeedItem, attempt: Attempt, retryInMs: number | undefined, at = new Date()): string {
  let line = `${clock(at)}  ${item.event_id}  ${item.action}  → ${attempt.outcome}  ${attempt.ms} ms`;
  if (!attempt.ok) {
    line +=
      retryInMs === undefined
        ? `  (gave up after ${RETRY_DELAYS_MS.length + 1} attempts: event-callbacks replay ${item.event_id} sends it again)`
        : `  (again in ${retryInMs / 1000} s)`;
  }
  return line;
}
