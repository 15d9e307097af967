import { validationFailed } from '@app/runtime';
import type { EventFilter } from '@app/payloads';
import type { Conditions } from './sql-conditions';
import { timeRange } from './time-range';

/** The widest range `q` may search: bounded work even for a value that is everywhere. */
export const MAX_SEARCH_RANGE_MS = 31 * 24 * 60 * 60 * 1000;

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * What the message's scalars (`message_scalars`, migration MessageScalarsSearch) must hold for `q`: its
 * string, or its number when it spells one (`12345` finds `{"customer_id": 12345}` and `{"id": "12345"}`),
 * as one jsonpath predicate, so the planner sees one condition its index serves (two containments joined
 * by OR were estimated as twice as common, and a page's LIMIT then walked the seq index instead). JSON
 * string escaping is valid jsonpath string syntax, and the path travels as a bind parameter.
 */
export function messageScalarsPredicate(q: string): string {
  const scalars = [JSON.stringify(q)];
  if (JSON_NUMBER.test(q) && Number.isFinite(Number(q))) scalars.push(q);
  return scalars.map((scalar) => `$[*] == ${scalar}`).join(' || ');
}

/**
 * Where addEventFilter's columns are: `event` prefixes the event's columns, `delivery` the primary
 * delivery's `status` (events carry no status: it lives in `deliveries`, CONTRACT §3's status being the
 * primary's). Unqualified by default, for a statement whose FROM names each column once.
 */
export interface FilterColumns {
  event?: string;
  delivery?: string;
}

/**
 * Adds the filter's conditions (the (account_id|action, seq) indexes, created_at, and the message scalars'
 * GIN index for `q`; status has no index of its own: see AdminEventsService.list). `q` needs `since` and a
 * range of at most 31 days.
 */
export function addEventFilter(conditions: Conditions, filter: EventFilter, columns: FilterColumns = {}): void {
  const event = columns.event ? `${columns.event}.` : '';
  const delivery = columns.delivery ? `${columns.delivery}.` : '';
  const range = timeRange(filter.since, filter.until);
  let until = range.until;
  if (filter.q !== undefined) {
    until ??= new Date();
    if (!range.since) throw validationFailed([{ path: 'since', problem: 'since is required with q (a range of at most 31 days)' }]);
    if (until.getTime() - range.since.getTime() > MAX_SEARCH_RANGE_MS) {
      throw validationFailed([{ path: 'since', problem: 'with q, since must be at most 31 days before until' }]);
    }
    if (until.getTime() <= range.since.getTime()) throw validationFailed([{ path: 'since', problem: 'since must be earlier than until' }]);
  }
  if (filter.account_id !== undefined) conditions.add((p) => `${event}account_id = ${p}`, filter.account_id);
  if (filter.action !== undefined) conditions.add((p) => `${event}action = ${p}`, filter.action);
  if (filter.status !== undefined) conditions.add((p) => `${delivery}status = ${p}`, filter.status);
  if (range.since) conditions.add((p) => `${event}created_at >= ${p}`, range.since);
  if (until) conditions.add((p) => `${event}created_at < ${p}`, until);
  if (filter.q !== undefined) conditions.add((p) => `message_scalars(${event}message) @@ ${p}::jsonpath`, messageScalarsPredicate(filter.q));
}
