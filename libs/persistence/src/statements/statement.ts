/**
 * A statement in one place: its name, its text with named parameters, and how PostgreSQL plans it.
 * Callers pass an object of named values and never see the text's positions; nothing outside this
 * folder's modules assembles or rewrites SQL text that runs on the hot path.
 *
 * Plan modes, chosen with each statement for its own reason:
 * - `generic`: prepared on a connection that keeps one generic plan for every call (GenericPlanPool).
 *   For statements over partitioned tables written so one plan serves (scalar seq bounds prune at
 *   executor start): planning them for their values cost more than running them.
 * - `prepared`: a named prepared statement on the app's pool (parsed once per connection, planned as
 *   PostgreSQL chooses): for statements run often whose best plan depends on their values.
 * - `plain`: sent as text each time; for statements run rarely (operators' reads, maintenance).
 */
export type PlanMode = 'generic' | 'prepared' | 'plain';

/** A parameter's placeholder in a statement's text (`$n`), by name. */
export type Placeholders<P> = { readonly [K in keyof P]-?: string };

export interface Statement<P extends object, R extends object> {
  readonly name: string;
  readonly plan: PlanMode;
  readonly text: string;
  /** The positional values of `params`, in the order the text numbers them. */
  values(params: P): unknown[];
  /** Only for typing the rows: never set. */
  readonly rows?: R;
}

/**
 * Defines a statement: `build` writes the text with `p.<name>` where each parameter goes (a name used
 * twice is one placeholder); the names become positions in the order they first appear.
 */
export function defineStatement<P extends object, R extends object = Record<string, never>>(
  name: string,
  plan: PlanMode,
  build: (p: Placeholders<P>) => string,
): Statement<P, R> {
  const order: string[] = [];
  const placeholders = new Proxy({} as Placeholders<P>, {
    get(_, key) {
      if (typeof key !== 'string') throw new Error(`statement ${name}: parameter names are strings`);
      let index = order.indexOf(key);
      if (index < 0) index = order.push(key) - 1;
      return `$${index + 1}`;
    },
  });
  const text = build(placeholders);
  return {
    name,
    plan,
    text,
    values(params: P): unknown[] {
      const record = params as Record<string, unknown>;
      return order.map((key) => {
        if (!(key in record)) throw new Error(`statement ${name}: parameter ${key} is missing`);
        const value = record[key];
        return value === undefined ? null : value;
      });
    },
  };
}

/** The parameter names of a statement in position order (for tests that check a statement's shape). */
export function parameterNames(statement: Statement<object, object>): string[] {
  const names: string[] = [];
  const probe = new Proxy(
    {},
    {
      has: () => true,
      get: (_, key) => {
        names.push(String(key));
        return null;
      },
    },
  );
  statement.values(probe);
  return names;
}
