import { Client } from 'pg';

interface TableWrites {
  table: string;
  inserted: number;
  updated: number;
  hot: number;
  deleted: number;
}

/** A partition's table: `events_p20261129`, `events_default` and `events_legacy` are `events`. */
export function parentTable(name: string): string {
  return name.replace(/_(p\d{6,8}|default|legacy)$/, '');
}

/**
 * What the whole run wrote to each table (its partitions summed), from pg_stat_user_tables: the check
 * behind "the event row is written once" (an `events` update would be an outcome rewriting the event)
 * and "outcomes are HOT updates" (deliveries' updated and HOT counts equal).
 */
export async function tableWritesText(databaseUrl: string): Promise<string> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // The counters reach the view when each backend reports them (at most a second later, or at its end).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const rows = (
      await client.query<{ name: string; ins: string; upd: string; hot: string; del: string }>(
        'SELECT relname AS name, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot, n_tup_del::text AS del FROM pg_stat_user_tables',
      )
    ).rows;
    const totals = new Map<string, TableWrites>();
    for (const row of rows) {
      const table = parentTable(row.name);
      const total = totals.get(table) ?? { table, inserted: 0, updated: 0, hot: 0, deleted: 0 };
      total.inserted += Number(row.ins);
      total.updated += Number(row.upd);
      total.hot += Number(row.hot);
      total.deleted += Number(row.del);
      totals.set(table, total);
    }
    const written = [...totals.values()].filter((total) => total.inserted + total.updated + total.deleted > 0).sort((a, b) => b.inserted - a.inserted);
    const number = (value: number): string => value.toLocaleString('en-US');
    return [
      'Rows the whole run wrote, by table (partitions summed; pg_stat_user_tables):',
      '',
      '| table | inserted | updated | of which HOT | deleted |',
      '|---|---|---|---|---|',
      ...written.map((total) => `| ${total.table} | ${number(total.inserted)} | ${number(total.updated)} | ${number(total.hot)} | ${number(total.deleted)} |`),
      '',
    ].join('\n');
  } finally {
    await client.end();
  }
}
