import { adminCall, type Json } from '../support/admin-client';
import { useConfigApiAndIngest } from '../support/config-api-and-ingest';
import { ensureConsoleBuilt } from '../support/console-build';
import { INGEST_HEADERS } from '../support/fixtures';
import { signedOpenApiCall } from '../support/open-api-client';

/**
 * Hostile query values and text on config-api (CONTRACT §2, §3): every one a 4xx naming the parameter,
 * never a 500; a far past or future date bounds the query.
 */
const suite = useConfigApiAndIngest();

const cursorOf = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

describe('admin query values', () => {
  it.each([
    ['/admin/v1/events?until=2300-01-01'],
    ['/admin/v1/events?since=0001-01-01'],
    ['/admin/v1/events?since=0001-01-01&until=9999-12-31T23:59:59Z'],
    ['/admin/v1/events?since=2020-01-01&until=2300-01-01&account_id=1'],
    ['/admin/v1/bot-calls?since=0001-01-01&until=9999-12-31'],
  ])('bounds the query for a far date: %s', async (path) => {
    const answer = await adminCall(suite.configApi, 'GET', path);
    expect(answer.status).toBe(200);
    expect(Array.isArray(answer.body.items)).toBe(true);
  });

  it('finds the events of the range when one end is far away', async () => {
    const eventId = `hostile-range-${process.pid}-${Date.now()}`;
    const response = await fetch(`${suite.ingest.url}/v1/events`, {
      method: 'POST',
      headers: INGEST_HEADERS,
      body: JSON.stringify({ account_id: suite.account.id, action: 'Customer_destroy', message: { id: 1 }, event_id: eventId }),
    });
    expect(response.status).toBe(202);
    const answer = await adminCall(suite.configApi, 'GET', `/admin/v1/events?account_id=${suite.account.id}&since=0001-01-01&until=2300-01-01`);
    expect(answer.body.items.map((item: Json) => item.event_id)).toEqual([eventId]);
  });

  it.each([
    ['/admin/v1/events?cursor=' + cursorOf('v1:9999999999999999999'), 'cursor'],
    ['/admin/v1/events?cursor=' + cursorOf('v1:9223372036854775808'), 'cursor'],
    ['/admin/v1/bot-calls?since=2020-W01', 'since'],
    ['/admin/v1/bot-calls?since=2020-123', 'since'],
    ['/admin/v1/bot-calls?until=2020-02-30', 'until'],
    ['/admin/v1/bot-calls?since=2020-01-02&until=2020-01-01', 'until'],
    ['/admin/v1/accounts?search=a%00b', 'search'],
    ['/admin/v1/events?action=%00', 'action'],
    ['/admin/v1/bot-calls?integration_name=x%00', 'integration_name'],
  ])('answers 400 naming the parameter: %s', async (path, parameter) => {
    const answer = await adminCall(suite.configApi, 'GET', path);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_query');
    expect(answer.body.details.map((detail: Json) => detail.path)).toContain(parameter);
  });

  it('still pages with the largest cursor PostgreSQL can hold', async () => {
    const answer = await adminCall(suite.configApi, 'GET', '/admin/v1/events?limit=1&cursor=' + cursorOf('v1:9223372036854775807'));
    expect(answer.status).toBe(200);
  });
});

describe('NUL characters in stored text', () => {
  it.each([
    ['/admin/v1/accounts', 'name', () => ({ email: `nul-${Date.now()}@example.com`, name: 'a\u0000b' })],
    ['/admin/v1/accounts', 'email', () => ({ email: 'a\u0000@example.com' })],
    ['bot-webhooks', 'name', () => ({ name: 'n\u0000', type: 'task_push', url: 'https://example.com/x', key: 'k' })],
    ['bot-webhooks', 'key', () => ({ name: 'n', type: 'task_push', url: 'https://example.com/x', key: 'secret-\u0000' })],
    ['bot-webhooks', 'url', () => ({ name: 'n', type: 'task_push', url: 'https://example.com/\u0000', key: 'k' })],
    ['bulk redelivery', 'since', () => ({ status: 'failed', since: '2020-01-01\u0000' })],
  ])('refuses it in %s with 422 naming %s', async (target, field, body) => {
    const path =
      target === 'bot-webhooks' ? `/admin/v1/accounts/${suite.account.id}/bot-webhooks` : target === 'bulk redelivery' ? `/admin/v1/accounts/${suite.account.id}/redeliver` : target;
    const answer = await adminCall(suite.configApi, 'POST', path, body());
    expect(answer.status).toBe(422);
    expect(answer.body.details).toEqual([{ path: field, problem: expect.stringContaining('NUL') }]);
  });

  it('refuses it in every Open API field with code 2000', async () => {
    for (const [operation, body] of [
      ['set_url', { push_url: 'https://example.com/\u0000' }],
      ['set_push_content_type', { push_content_type: 'JSON\u0000' }],
      ['set_permissions', { permissions: { 'customer_create\u0000': true } }],
    ] as const) {
      const answer = await signedOpenApiCall(suite.configApi, suite.account, operation, body);
      expect({ operation, status: answer.status, code: answer.body.code }).toEqual({ operation, status: 400, code: 2000 });
      expect(answer.body.exception.message).toMatch(/NUL/);
    }
    const settings = await signedOpenApiCall(suite.configApi, suite.account, 'push_settings');
    expect(settings.body.push_url).toBeNull();
  });

  it('refuses it in the Open API query before authenticating', async () => {
    const response = await fetch(`${suite.configApi.url}/open_api_v1/push_settings?email=a%00b&timestamp=1&nonce=n&sign_version=v2&sign=x`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).code).toBe(2000);
  });
});

describe('bodies the validators cannot walk (found by the fuzz suite)', () => {
  it('answers 422 for a body nested thousands of levels, naming where the limit was passed', async () => {
    const body = `{"email":"deep@example.com","name":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const response = await fetch(`${suite.configApi.url}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN ?? ''}`, 'content-type': 'application/json' }, body });
    expect(response.status).toBe(422);
    const answer = (await response.json()) as Json;
    expect(answer.details).toEqual([{ path: `name${'.a'.repeat(32)}`, problem: expect.stringContaining('nests deeper than 32 levels') }]);
  });

  it('answers 4xx, not 500, for an object-valued constructor key, which class-transformer takes for a class', async () => {
    const answer = await adminCall(suite.configApi, 'POST', '/admin/v1/accounts', { email: `ctor-${Date.now()}@example.com`, constructor: { prototype: 1 } });
    expect(answer.status).toBeLessThan(500);
    const search = await adminCall(suite.configApi, 'GET', '/admin/v1/accounts?constructor[a]=1');
    expect(search.status).toBeLessThan(500);
  });
});

describe('bodies that do not decode as their Content-Encoding says (found by the fuzz suite)', () => {
  it.each(['gzip', 'deflate', 'br'])('answers 400, not 500, for %s on bytes that are not', async (encoding) => {
    const admin = await fetch(`${suite.configApi.url}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN ?? ''}`, 'content-type': 'application/json', 'content-encoding': encoding },
      body: '{"email":"x@example.com"}',
    });
    expect([admin.status, ((await admin.json()) as Json).error]).toEqual([400, 'bad_request']);
    for (const path of ['/v1/events', '/v1/events?via=nest']) {
      const ingest = await fetch(`${suite.ingest.url}${path}`, { method: 'POST', headers: { ...INGEST_HEADERS, 'content-encoding': encoding }, body: '{"account_id":1}' });
      expect({ path, status: ingest.status }).toEqual({ path, status: 400 });
    }
  });
});

describe('the console page with a Range it cannot satisfy (found by the fuzz suite)', () => {
  it('answers 416, not 500', async () => {
    await ensureConsoleBuilt();
    for (const path of ['/admin', '/admin/events', '/admin/%F3%B3%84%95']) {
      const response = await fetch(`${suite.configApi.url}${path}`, { headers: { range: 'bytes=5-1' } });
      expect({ path, status: response.status }).toEqual({ path, status: 416 });
    }
  });
});
