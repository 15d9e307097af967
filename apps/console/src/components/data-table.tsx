import type { ComponentChildren } from 'preact';
import type { Paged } from '../lib/use-loader';
import { ErrorMessage, LoadMore } from './bits';

/** One column of a DataTable: its heading and what each row shows in it. */
export interface Column<T> {
  head: string;
  /** A number column: its heading and cells carry class "num" (right-aligned). */
  num?: boolean;
  /** The cells' class, for a column that is not `num`. */
  class?: string;
  /** The cells' data-column, which the browser tests select by. */
  column?: string;
  title?: (item: T) => string | undefined;
  cell: (item: T) => ComponentChildren;
}

/**
 * The console's and the portal's tables: a row per item, a cell per column. `idAttribute` (e.g.
 * `data-account-id`) marks each row with its key, for the browser tests to find it.
 */
export function DataTable<T>({ columns, items, rowKey, idAttribute, class: className = 'grid' }: {
  columns: Column<T>[];
  items: T[];
  rowKey: (item: T) => string | number;
  idAttribute?: string;
  class?: string;
}) {
  return (
    <table class={className}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.head} class={column.num ? 'num' : undefined}>
              {column.head}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {items.map((item) => {
          const id = rowKey(item);
          return (
            <tr key={id} {...(idAttribute ? { [idAttribute]: id } : {})}>
              {columns.map((column) => (
                <td
                  key={column.head}
                  class={column.num ? 'num' : column.class}
                  data-column={column.column}
                  title={column.title?.(item)}
                >
                  {column.cell(item)}
                </td>
              ))}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A cursor-paged list under its filters: the error, the list itself (`children`), `empty` when nothing matched, and Load more. */
export function PagedList<T>({ page, empty, children }: { page: Paged<T>; empty: string; children: ComponentChildren }) {
  return (
    <>
      <ErrorMessage error={page.error} />
      {children}
      {!page.loading && !page.error && page.items.length === 0 && <p class="muted">{empty}</p>}
      <LoadMore hasMore={page.hasMore} loading={page.loading} onClick={page.loadMore} />
    </>
  );
}

/** A list loaded whole: nothing while it loads, `empty` when it came back empty, else the list (`children`). */
export function ListOrEmpty({ loaded, count, empty, children }: { loaded: boolean; count: number; empty: string; children: ComponentChildren }) {
  if (count > 0) return <>{children}</>;
  return loaded ? <p class="muted">{empty}</p> : null;
}
