import { Agent, fetch, type RequestInit } from 'undici';
import { useConfigApiAndIngest } from '../support/config-api-and-ingest';
import { INGEST_HEADERS } from '../support/fixtures';
import { signedOpenApiCall } from '../support/open-api-client';

/**
 * CONTRACT §1: metric label values come from fixed sets, so the series /metrics serves do not grow with
 * what clients send. Thousands of spellings of paths (case variants, unknown operations, junk) are sent
 * to config-api and ingest; the set of series must stay the same after a first round.
 */
const suite = useConfigApiAndIngest();

/**
 * The apps run in this test's own process, so a busy machine can stall the event loop for seconds. A
 * pooled connection reused just as the server's keep-alive time (5 s) ran out on it is closed by the
 * server under the request, which fetch reports as ECONNRESET: a race of the test's client, not of the
 * routes under test. Retiring idle connections early on the client's side (500 ms) narrowed it and did
 * not close it (it failed once more in a run with one core kept busy), so no connection is reused:
 * every request asks the server to close its connection after the answer.
 */
const client = new Agent();
afterAll(() => client.close());
const ONE_REQUEST_PER_CONNECTION = { connection: 'close' };

/** Series that appear as the runtime first does something: garbage collections by V8's four kinds. */
const RUNTIME_SERIES = /^nodejs_gc_duration_seconds/;

/** Every series of a /metrics answer (name and labels, not the value). */
async function seriesOf(url: string): Promise<Set<string>> {
  const text = await (await fetch(`${url}/metrics`, { dispatcher: client, headers: ONE_REQUEST_PER_CONNECTION })).text();
  return new Set(
    text
      .split('\n')
      .filter((line) => line && !line.startsWith('#') && !RUNTIME_SERIES.test(line))
      .map((line) => line.slice(0, line.lastIndexOf(' '))),
  );
}

/** The `n`th spelling of `word`: its letters upper- or lower-cased by the bits of n. */
function caseVariant(word: string, n: number): string {
  let bit = 0;
  return word.replace(/[a-z]/gi, (letter) => {
    const upper = ((n >> bit) & 1) === 1;
    bit += 1;
    return upper ? letter.toUpperCase() : letter.toLowerCase();
  });
}

async function sendVariants(base: string, paths: (n: number) => string, from: number, count: number, init: RequestInit = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = from; start < from + count; start += 50) {
    const batch = Array.from({ length: Math.min(50, from + count - start) }, (_, offset) => fetch(`${base}${paths(start + offset)}`, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), ...ONE_REQUEST_PER_CONNECTION }, dispatcher: client }));
    for (const response of await Promise.all(batch)) {
      statuses.push(response.status);
      await response.arrayBuffer();
    }
  }
  return statuses;
}

const openApiPaths = (n: number): string => {
  const spellings = [
    () => `/open_api_v1/${caseVariant('set_permissions', n)}?email=x&sign=y`,
    () => `/open_api_v1/no_such_operation_${n}`,
    () => `/${caseVariant('open_api_v1', n)}/push_settings`,
    () => `/open_api_v1/push_settings/${n}`,
  ];
  return spellings[n % spellings.length]();
};

describe('metric series do not grow with the paths clients send', () => {
  it('config-api: thousands of Open API spellings, signed and not, add no series', async () => {
    const signed = await signedOpenApiCall(suite.configApi, suite.account, 'SeT_PeRmIsSiOnS', { permissions: { customer_create: true } });
    expect(signed.status).toBe(200);
    await sendVariants(suite.configApi.url, openApiPaths, 0, 200, { method: 'POST' });
    await sendVariants(suite.configApi.url, openApiPaths, 0, 200);
    const before = await seriesOf(suite.configApi.url);

    const statuses = await sendVariants(suite.configApi.url, openApiPaths, 200, 2000, { method: 'POST' });
    // Refused unauthenticated (401, then 429 once the failed-authentication limit for that email is reached) or unknown (404).
    expect([...new Set(statuses)].filter((status) => ![401, 404, 429].includes(status))).toEqual([]);
    expect(statuses).toContain(404);
    await sendVariants(suite.configApi.url, (n) => `/admin/v1/${caseVariant('events', n)}/${n}`, 0, 500);
    const after = await seriesOf(suite.configApi.url);

    expect([...after].filter((series) => !before.has(series))).toEqual([]);
    const operations = [...after].filter((series) => series.startsWith('open_api_requests_total{')).map((series) => /operation="([^"]*)"/.exec(series)?.[1]);
    expect(new Set(operations)).toEqual(new Set(['set_permissions', 'push_settings', 'unmatched']));
  });

  it('ingest: thousands of spellings of its routes add no series', async () => {
    const paths = (n: number): string => [`/${caseVariant('v1/events', n)}`, `/v1/events/${n}`, `/${caseVariant('v1/bot/task-push', n)}`, `/nothing/${n}`][n % 4];
    const init = { method: 'POST', headers: INGEST_HEADERS, body: '{"events":[]}' };
    await sendVariants(suite.ingest.url, paths, 0, 200, init);
    const before = await seriesOf(suite.ingest.url);
    await sendVariants(suite.ingest.url, paths, 200, 2000, init);
    expect([...(await seriesOf(suite.ingest.url))].filter((series) => !before.has(series))).toEqual([]);
  });
});
