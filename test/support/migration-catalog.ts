import type { Client } from 'pg';

/**
 * The shape of a database's public schema as plain, sorted rows, for comparing a schema before a
 * migration's up and after its down (and one up with the next): every relation with its kind, partition
 * bound, parent and storage options; every column (by name: a column dropped and added again comes back
 * last, which no statement of the service can see); every constraint, index and trigger by name and
 * definition; every function of the service's own (extensions' left out) by its definition, whitespace
 * collapsed (a body written with other indentation is the same function).
 */
export interface Catalog {
  relations: { name: string; kind: string; parent: string | null; bound: string | null; options: string[] | null }[];
  columns: { relation: string; column: string; type: string; not_null: boolean; default: string | null; identity: string }[];
  constraints: { relation: string; name: string; definition: string; local: boolean; inherited: number }[];
  indexes: { relation: string; name: string; definition: string }[];
  triggers: { relation: string; name: string; definition: string }[];
  functions: { name: string; arguments: string; definition: string }[];
}

const PUBLIC_RELATIONS = `
  SELECT c.oid, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')`;

export async function catalogOf(db: Client): Promise<Catalog> {
  const rows = async <T>(sql: string): Promise<T[]> => (await db.query(sql)).rows as T[];
  return {
    relations: await rows(`
      SELECT r.relname AS name, r.relkind::text AS kind, p.relname AS parent, pg_get_expr(c.relpartbound, c.oid) AS bound, c.reloptions AS options
        FROM (${PUBLIC_RELATIONS}) r JOIN pg_class c ON c.oid = r.oid
        LEFT JOIN pg_inherits i ON i.inhrelid = r.oid LEFT JOIN pg_class p ON p.oid = i.inhparent
       ORDER BY 1`),
    columns: await rows(`
      SELECT r.relname AS relation, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
             pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity::text AS identity
        FROM (${PUBLIC_RELATIONS}) r JOIN pg_attribute a ON a.attrelid = r.oid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE a.attnum > 0 AND NOT a.attisdropped AND r.relkind <> 'S'
       ORDER BY 1, 2`),
    constraints: await rows(`
      SELECT r.relname AS relation, k.conname AS name, pg_get_constraintdef(k.oid) AS definition, k.conislocal AS local, k.coninhcount AS inherited
        FROM (${PUBLIC_RELATIONS}) r JOIN pg_constraint k ON k.conrelid = r.oid
       ORDER BY 1, 2`),
    indexes: await rows(`SELECT tablename AS relation, indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2`),
    triggers: await rows(`
      SELECT r.relname AS relation, t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
        FROM (${PUBLIC_RELATIONS}) r JOIN pg_trigger t ON t.tgrelid = r.oid
       WHERE NOT t.tgisinternal
       ORDER BY 1, 2`),
    functions: await rows(`
      SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS arguments,
             btrim(regexp_replace(pg_get_functiondef(p.oid), '\\s+', ' ', 'g')) AS definition
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public' AND p.prokind = 'f'
         AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
       ORDER BY 1, 2`),
  };
}

/** The rows of `relation` (with the partition each lives in) in a stable order, as node-postgres reads them. */
export async function rowsOf(db: Client, relation: string, orderBy: string): Promise<Record<string, unknown>[]> {
  return (await db.query(`SELECT tableoid::regclass::text AS partition, * FROM ${relation} ORDER BY ${orderBy}`)).rows as Record<string, unknown>[];
}

/** Several relations' rows at once, keyed by relation. */
export async function dataOf(db: Client, relations: Record<string, string>): Promise<Record<string, Record<string, unknown>[]>> {
  const data: Record<string, Record<string, unknown>[]> = {};
  for (const [relation, orderBy] of Object.entries(relations)) data[relation] = await rowsOf(db, relation, orderBy);
  return data;
}
