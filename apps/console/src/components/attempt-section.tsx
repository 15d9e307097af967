import type { AttemptView } from '@app/payloads/admin-api.types';
import { formatMs } from '../lib/format';
import { Json, Mono, Time } from './bits';

function Headers({ headers }: { headers: Record<string, string> | null }) {
  if (!headers || Object.keys(headers).length === 0) return <p class="muted">none</p>;
  return (
    <table class="headers">
      <tbody>
        {Object.entries(headers).map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Attempts refused before any call (open breaker, disabled endpoint, refused target) record no request. */
function madeNoCall(attempt: AttemptView): boolean {
  return attempt.response_status === null && !attempt.request_body && Object.keys(attempt.request_headers ?? {}).length === 0;
}

/**
 * One attempt: its request and the answer, or why no call was made. `data-attempt` marks the primary's
 * attempts only; another destination's carry its id beside the number.
 */
export function AttemptSection({ attempt, destinationId }: { attempt: AttemptView; destinationId?: string }) {
  const ok = attempt.response_status !== null && attempt.response_status >= 200 && attempt.response_status < 300;
  const marker = destinationId === undefined ? { 'data-attempt': attempt.attempt } : { 'data-destination-id': destinationId, 'data-destination-attempt': attempt.attempt };
  return (
    <article class="attempt" {...marker}>
      <header>
        <strong>Attempt {attempt.attempt}</strong>
        <span class="muted"> series {attempt.series}</span> · <Time iso={attempt.started_at} /> · {formatMs(attempt.duration_ms)} ·{' '}
        <span class={ok ? 'badge badge-delivered' : 'badge badge-failed'}>
          {attempt.response_status === null ? 'no answer' : `HTTP ${attempt.response_status}`}
        </span>{' '}
        ·{' '}
        <Mono>{attempt.url}</Mono>
      </header>
      {attempt.error && (
        <p class="attempt-error">
          <strong>Error:</strong> {attempt.error}
        </p>
      )}
      {madeNoCall(attempt) ? (
        <p class="muted">No HTTP call was made for this attempt.</p>
      ) : (
      <div class="exchange">
        <div>
          <h4>Request headers</h4>
          <Headers headers={attempt.request_headers} />
          <h4>Request body</h4>
          <Json value={attempt.request_body} label="Request body" />
        </div>
        <div>
          <h4>Response {attempt.response_status ?? ''}</h4>
          <Headers headers={attempt.response_headers} />
          <h4>Response body</h4>
          {attempt.response_body === null ? <p class="muted">none</p> : <Json value={attempt.response_body} label="Response body" />}
        </div>
      </div>
      )}
    </article>
  );
}
