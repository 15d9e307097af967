import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { adminCall, expectQueryError, type Json } from '../support/admin-client';
import { type RunningApp, startApp } from '../support/apps';
import { IsolatedNamespace } from '../support/isolated-namespace';

/** Own database: the list and its pages must hold exactly this file's accounts. */
const namespace = new IsolatedNamespace('admin-accounts-list');
let configApi: RunningApp;

async function create(email: string, name?: string): Promise<number> {
  const answer = await adminCall(configApi, 'POST', '/admin/v1/accounts', { email, ...(name ? { name } : {}) });
  expect(answer.status).toBe(201);
  return answer.body.id as number;
}

const ids: number[] = [];

beforeAll(async () => {
  await namespace.setUp();
  configApi = await startApp(ConfigApiModule, namespace.overrides);
  ids.push(await create('alice@shop.example.com', 'Alice Shop'));
  ids.push(await create('bob@Garage.example.org', 'Bob 50%_off'));
  ids.push(await create('carol@shop.example.com'));
  ids.push(await create('dave@other.example.net', 'Davids Garage'));
  ids.push(await create('erin@example.com', 'Erin'));
});

afterAll(async () => {
  await configApi?.close();
  await namespace.tearDown();
});

function emails(body: Json): string[] {
  return (body.items as Json[]).map((item) => item.email as string);
}

describe('GET /admin/v1/accounts', () => {
  it('lists account views newest first', async () => {
    const answer = await adminCall(configApi, 'GET', '/admin/v1/accounts');
    expect(answer.status).toBe(200);
    expect(emails(answer.body)).toEqual([
      'erin@example.com',
      'dave@other.example.net',
      'carol@shop.example.com',
      'bob@Garage.example.org',
      'alice@shop.example.com',
    ]);
    expect(answer.body.next_cursor).toBeNull();
    // Each item is the same view as GET /admin/v1/accounts/:id.
    const single = await adminCall(configApi, 'GET', `/admin/v1/accounts/${ids[0]}`);
    expect((answer.body.items as Json[])[4]).toEqual(single.body);
    expect(JSON.stringify(answer.body)).not.toMatch(/open_api_token|signing_secret|whsec_/);
  });

  it('walks every account exactly once through cursor pages', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `limit=2&cursor=${encodeURIComponent(cursor)}` : 'limit=2';
      const answer = await adminCall(configApi, 'GET', `/admin/v1/accounts?${query}`);
      expect(answer.status).toBe(200);
      expect((answer.body.items as Json[]).length).toBeLessThanOrEqual(2);
      seen.push(...emails(answer.body));
      cursor = answer.body.next_cursor as string | null;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(emails((await adminCall(configApi, 'GET', '/admin/v1/accounts')).body));
  });

  it('searches a part of the email or name in any letter case, or the id exactly', async () => {
    const search = async (text: string): Promise<string[]> =>
      emails((await adminCall(configApi, 'GET', `/admin/v1/accounts?search=${encodeURIComponent(text)}`)).body);
    expect(await search('SHOP.example')).toEqual(['carol@shop.example.com', 'alice@shop.example.com']);
    expect(await search('garage')).toEqual(['dave@other.example.net', 'bob@Garage.example.org']);
    expect(await search('%_')).toEqual(['bob@Garage.example.org']);
    expect(await search(String(ids[2]))).toEqual(['carol@shop.example.com']);
    expect(await search('nobody-has-this')).toEqual([]);
    // Search and pages combine.
    const first = await adminCall(configApi, 'GET', '/admin/v1/accounts?search=example&limit=4');
    expect(first.body.items).toHaveLength(4);
    const rest = await adminCall(configApi, 'GET', `/admin/v1/accounts?search=example&limit=4&cursor=${encodeURIComponent(first.body.next_cursor as string)}`);
    expect(emails(rest.body)).toEqual(['alice@shop.example.com']);
    expect(rest.body.next_cursor).toBeNull();
  });

  it('uses the trigram indexes for the search', async () => {
    await namespace.db.query('SET enable_seqscan = off');
    const { rows } = await namespace.db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT id FROM accounts WHERE lower(email) LIKE '%shop.ex%' OR lower(name) LIKE '%shop.ex%'`,
    );
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toContain('accounts_email_trgm_idx');
    expect(plan).toContain('accounts_name_trgm_idx');
  });

  it('refuses bad parameters with 422 naming the field', async () => {
    await expectQueryError(configApi, 'GET', '/admin/v1/accounts?limit=0', 'limit');
    await expectQueryError(configApi, 'GET', '/admin/v1/accounts?limit=201', 'limit');
    await expectQueryError(configApi, 'GET', '/admin/v1/accounts?limit=ten', 'limit');
    await expectQueryError(configApi, 'GET', '/admin/v1/accounts?cursor=bm90LWEtY3Vyc29y', 'cursor');
    // Crafted in the cursor's own shape: an id past int4, times PostgreSQL cannot add to the epoch, garbage bytes.
    for (const crafted of ['a1:1700000000000000:2147483648', 'a1:1700000000000000:9999999999', 'a1:-999999999999999999:1', 'a1:999999999999999999:1', 'a1:0:0', '\u0000\uffff']) {
      await expectQueryError(configApi, 'GET', `/admin/v1/accounts?cursor=${Buffer.from(crafted, 'utf8').toString('base64url')}`, 'cursor');
    }
    await expectQueryError(configApi, 'GET', `/admin/v1/accounts?search=${'x'.repeat(321)}`, 'search');
    await expectQueryError(configApi, 'GET', '/admin/v1/accounts?sort=name', 'sort');
  });
});
