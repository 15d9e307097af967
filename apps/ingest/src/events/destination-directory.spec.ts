import type { DataSource } from 'typeorm';
import { loadEnvironment } from '@app/runtime';
import { DestinationDirectory } from './destination-directory';

/** A database that answers the directory's two queries and counts them. */
class CountingDatabase {
  readonly queries: string[] = [];
  constructor(
    private readonly destinations: { account_id: number; id: string; actions: string[] | null; filter: Record<string, unknown> | null; permissions: Record<string, boolean> }[],
  ) {}

  query(sql: string, parameters: unknown[] = []): Promise<unknown[]> {
    this.queries.push(sql);
    if (sql.includes('DISTINCT account_id')) return Promise.resolve([...new Set(this.destinations.map((row) => row.account_id))].map((account_id) => ({ account_id })));
    const accounts = parameters[0] as number[];
    return Promise.resolve(this.destinations.filter((row) => accounts.includes(row.account_id)));
  }
}

function directoryOver(database: CountingDatabase): DestinationDirectory {
  const directory = new DestinationDirectory(database as unknown as DataSource, loadEnvironment({ ...process.env, SECRETS_KEY: 'test:' + Buffer.alloc(32).toString('base64') }));
  // As when the settings channel is subscribed: cached answers may be served.
  Object.defineProperty(directory, 'subscription', { value: { listening: true, start: () => undefined, close: () => Promise.resolve() } });
  return directory;
}

const on = { customer_create: true, customer_update: true };

describe('DestinationDirectory (which extra destinations take an event, decided at ingest)', () => {
  it('costs an account without destinations no query per event, and one after a change of its settings', async () => {
    const database = new CountingDatabase([{ account_id: 2, id: 'dst_b', actions: null, filter: null, permissions: on }]);
    const directory = directoryOver(database);
    const event = { accountId: 1, action: 'Customer_create', message: { id: 1 } };

    expect(await directory.takersOf([event])).toBeNull();
    expect(database.queries).toHaveLength(1);
    for (let index = 0; index < 5; index += 1) expect(await directory.takersOf([event])).toBeNull();
    expect(database.queries).toHaveLength(1);

    directory.invalidate(1);
    expect(await directory.takersOf([event])).toBeNull();
    expect(database.queries).toHaveLength(2);
    expect(await directory.takersOf([event])).toBeNull();
    expect(database.queries).toHaveLength(2);
  });

  it('takes by permission, actions and filter, and caches the account', async () => {
    const database = new CountingDatabase([
      { account_id: 2, id: 'dst_all', actions: null, filter: null, permissions: on },
      { account_id: 2, id: 'dst_big', actions: ['Customer_create'], filter: { id: { $gt: 5 } }, permissions: on },
    ]);
    const directory = directoryOver(database);
    const takers = await directory.takersOf([
      { accountId: 2, action: 'Customer_create', message: { id: 10 } },
      { accountId: 2, action: 'Customer_create', message: { id: 1 } },
      { accountId: 2, action: 'Customer_update', message: { id: 10 } },
      // Permission off: no destination takes it.
      { accountId: 2, action: 'Customer_destroy', message: { id: 10 } },
      { accountId: 1, action: 'Customer_create', message: { id: 10 } },
    ]);
    expect(takers).toEqual([['dst_all', 'dst_big'], ['dst_all'], ['dst_all'], [], []]);
    const queries = database.queries.length;
    await directory.takersOf([{ accountId: 2, action: 'Customer_create', message: { id: 1 } }]);
    expect(database.queries).toHaveLength(queries);
  });
});
