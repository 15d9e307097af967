import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api/client';
import { formatTime, prettyJson } from '../lib/format';

/** Small presentational pieces shared by the pages. Every value is rendered as text. */

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

export function ErrorMessage({ error }: { error: ApiError | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.status ? `${error.status} ${error.code}: ` : ''}
      {error.message}
    </p>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  return <time title={iso ?? undefined}>{formatTime(iso)}</time>;
}

export function Json({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre class="json" aria-label={label}>
      {prettyJson(value)}
    </pre>
  );
}

export function Mono({ children }: { children: ComponentChildren }) {
  return <span class="mono">{children}</span>;
}

/** A two-column table of labelled values. */
export function Fields({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <table class="fields">
      <tbody>
        {rows.map(([label, value]) => (
          <tr key={label}>
            <th scope="row">{label}</th>
            <td>{value ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function LoadMore({ hasMore, loading, onClick }: { hasMore: boolean; loading: boolean; onClick: () => void }) {
  if (loading) return <p class="muted">Loading…</p>;
  if (!hasMore) return null;
  return (
    <button type="button" class="load-more" onClick={onClick}>
      Load more
    </button>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="panel">
      <header class="panel-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}
