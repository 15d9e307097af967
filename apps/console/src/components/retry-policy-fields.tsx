import type { ApiError } from '../api/client';
import type { DestinationView } from '../api/destinations';

/*
 * A destination's retry policy and deadline (CONTRACT §13) as four text fields, for the console and the
 * portal alike. What is typed goes to the server as typed (a duration stays a string, a status becomes a
 * number only when it is one), so the server's own check decides and its words for a bad value are shown
 * beside the field it names.
 */

export interface RetryDraft {
  schedule: string;
  stop_on: string;
  disable_on: string;
  expire_after: string;
}

export interface RetryChange {
  retry?: { schedule?: string[]; stop_on?: (number | string)[]; disable_on?: (number | string)[] };
  expire_after?: string | null;
}

export function retryDraftOf(view: Pick<DestinationView, 'retry' | 'expire_after'>): RetryDraft {
  return {
    schedule: view.retry.schedule.join(', '),
    stop_on: view.retry.stop_on.join(', '),
    disable_on: view.retry.disable_on.join(', '),
    expire_after: view.expire_after ?? '',
  };
}

function words(text: string): string[] {
  return text
    .split(/[,\s]+/)
    .map((word) => word.trim())
    .filter((word) => word !== '');
}

/** "404, 410" → [404, 410]; a word that is no number is sent as it is, for the server to name. */
function statuses(text: string): (number | string)[] {
  return words(text).map((word) => (/^\d{1,6}$/.test(word) ? Number(word) : word));
}

const same = (left: unknown, right: unknown): boolean => JSON.stringify(left) === JSON.stringify(right);

/** Only what differs from `base`: a retry field not sent keeps its value (CONTRACT §13). */
export function retryChangeOf(draft: RetryDraft, base: Pick<DestinationView, 'retry' | 'expire_after'>, creating = false): RetryChange {
  const change: RetryChange = {};
  const retry: NonNullable<RetryChange['retry']> = {};
  const schedule = words(draft.schedule);
  if (!same(schedule, base.retry.schedule) && !(creating && draft.schedule.trim() === '')) retry.schedule = schedule;
  const stopOn = statuses(draft.stop_on);
  if (!same(stopOn, base.retry.stop_on)) retry.stop_on = stopOn;
  const disableOn = statuses(draft.disable_on);
  if (!same(disableOn, base.retry.disable_on)) retry.disable_on = disableOn;
  if (Object.keys(retry).length > 0) change.retry = retry;
  const expireAfter = draft.expire_after.trim() === '' ? null : draft.expire_after.trim();
  if (expireAfter !== base.expire_after) change.expire_after = expireAfter;
  return change;
}

/** The server's words for `path` (its 400's details), if it named that field. */
function problemFor(error: ApiError | undefined, path: string): string | undefined {
  const detail = (error?.details ?? []).find((candidate) => candidate.path === path || (candidate.path ?? '').startsWith(`${path}[`));
  return detail ? (detail.problem ?? error?.message) : undefined;
}

const FIELDS: { key: keyof RetryDraft; path: string; label: string; placeholder: string; hint: string }[] = [
  { key: 'schedule', path: 'retry.schedule', label: 'Retry schedule', placeholder: '10s, 1m, 5m, 30m', hint: 'waits between calls after the first, 100ms to 7d each; empty: one call only' },
  { key: 'stop_on', path: 'retry.stop_on', label: 'Stop on', placeholder: '404, 410', hint: 'statuses 400–499 that end a delivery at once' },
  { key: 'disable_on', path: 'retry.disable_on', label: 'Disable on', placeholder: '401, 403', hint: 'statuses 400–499 that end it and disable the destination' },
  { key: 'expire_after', path: 'expire_after', label: 'Expire after', placeholder: 'no deadline', hint: 'a deadline from acceptance, 1s to 30d (e.g. 2h)' },
];

/** The four fields, each with the server's complaint about it right beside it. `idPrefix` keeps ids unique on a page. */
export function RetryPolicyFields({ draft, error, idPrefix, creating = false, onChange }: {
  draft: RetryDraft;
  error: ApiError | undefined;
  idPrefix: string;
  /** A new destination: an empty schedule means the deployment's default, not "one call only". */
  creating?: boolean;
  onChange: (draft: RetryDraft) => void;
}) {
  return (
    <>
      {FIELDS.map(({ key, path, label, placeholder: example, hint }) => {
        const placeholder = creating && key === 'schedule' ? 'the default schedule' : example;
        const problem = problemFor(error, path);
        const id = `${idPrefix}-${key.replace('_', '-')}`;
        return (
          <div class="field" key={key}>
            <label for={id}>{label}</label>
            <input
              id={id}
              type="text"
              value={draft[key]}
              placeholder={placeholder}
              title={hint}
              aria-invalid={problem !== undefined}
              aria-describedby={problem !== undefined ? `${id}-error` : undefined}
              onInput={(event) => onChange({ ...draft, [key]: event.currentTarget.value })}
            />
            {problem !== undefined && (
              <span class="field-error" id={`${id}-error`} data-error-for={path} role="alert">
                {problem}
              </span>
            )}
          </div>
        );
      })}
    </>
  );
}

/** One line for lists: the schedule, the statuses and the deadline. */
export function retryPolicyText(view: Pick<DestinationView, 'retry' | 'expire_after'>): string {
  const parts = [view.retry.schedule.length === 0 ? 'one call only' : `retries ${view.retry.schedule.join(', ')}`];
  if (view.retry.stop_on.length > 0) parts.push(`stop on ${view.retry.stop_on.join(', ')}`);
  if (view.retry.disable_on.length > 0) parts.push(`disable on ${view.retry.disable_on.join(', ')}`);
  parts.push(view.expire_after === null ? 'no deadline' : `expires after ${view.expire_after}`);
  return parts.join(' · ');
}
