import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { openApiQuery } from '@app/signing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from '../support/apps';
import { ADMIN_HEADERS, createAccount, INGEST_HEADERS, type TestAccount } from '../support/fixtures';
import {
  caseVariant,
  encodeAny,
  hostileBody,
  hostileContentType,
  hostileHeaders,
  hostileJson,
  hostilePathParameter,
  hostileQuery,
  hostileText,
  ingestEventText,
} from '../support/fuzz-arbitraries';
import { destinationBody } from '../support/destination-arbitraries';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { portalToken } from '../support/portal-client';

/**
 * Property-based fuzzing of every route of every app (the routes their /docs/openapi.json declare, plus
 * the docs and the console): thousands of generated bodies, query strings, headers and paths, signed
 * and unsigned, with and without tokens. Properties: no 5xx (bot calls may answer 502/504, their
 * contract for a failing webhook), every process alive afterwards, and /metrics not growing with what
 * was sent. Seeded: FUZZ_SEED reproduces a run (the seed is in every failure), FUZZ_RUNS scales it.
 */
jest.setTimeout(170_000);

const SEED = Number(process.env.FUZZ_SEED ?? 16_2026);
const SCALE = Number(process.env.FUZZ_RUNS ?? 1);
const runs = (count: number): number => Math.max(1, Math.round(count * SCALE));

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Route {
  app: RunningApp;
  method: string;
  /** The template, e.g. `/admin/v1/accounts/{id}`. */
  path: string;
  queryNames: string[];
  bodyFields: string[];
}

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const namespace = new IsolatedNamespace('fuzz');
const apps: Record<'configApi' | 'ingest' | 'worker', RunningApp> = {} as never;
let account: TestAccount;
let routes: Route[] = [];

/** Routes from an app's OpenAPI document, with their query parameter names and body field names. */
async function routesOf(app: RunningApp): Promise<Route[]> {
  const doc = (await (await fetch(`${app.url}/docs/openapi.json`)).json()) as Json;
  const schemaFields = (schema: Json | undefined): string[] => {
    const resolved = schema?.$ref ? doc.components?.schemas?.[String(schema.$ref).split('/').pop() ?? ''] : schema;
    return Object.keys((resolved?.properties as Json | undefined) ?? {});
  };
  const found: Route[] = [];
  for (const [path, operations] of Object.entries(doc.paths as Json)) {
    for (const [method, operation] of Object.entries(operations as Json)) {
      const parameters = ((operation as Json).parameters ?? []) as Json[];
      found.push({
        app,
        method: method.toUpperCase(),
        path,
        queryNames: parameters.filter((p) => p.in === 'query').map((p) => String(p.name)),
        bodyFields: schemaFields((operation as Json).requestBody?.content?.['application/json']?.schema as Json | undefined),
      });
    }
  }
  return found;
}

/** Portal sessions of the fuzz account, each used for fewer calls than its 120 a minute. */
const portalSessions: string[] = [];
const PORTAL_SESSION_COUNT = 20;
const CALLS_PER_PORTAL_SESSION = 100;
let portalCalls = 0;

function portalBearer(): string {
  const token = portalSessions[Math.floor(portalCalls / CALLS_PER_PORTAL_SESSION) % portalSessions.length];
  portalCalls += 1;
  return `Bearer ${token}`;
}

function authHeaders(route: Route, auth: 'right' | 'none' | 'wrong'): Record<string, string> {
  const portal = route.path.startsWith('/portal/v1/') && route.path !== '/portal/v1/session';
  const bearer = route.path.startsWith('/admin')
    ? ADMIN_HEADERS.authorization
    : route.path.startsWith('/v1/')
      ? INGEST_HEADERS.authorization
      : portal && auth === 'right'
        ? portalBearer()
        : portal
          ? 'portal'
          : undefined;
  if (!bearer || auth === 'none') return {};
  return { authorization: auth === 'right' ? bearer : `Bearer ${randomUUID()}` };
}

/** Open API calls are signed with the account's token (a fresh nonce each), unless the fuzz asks otherwise. */
function openApiAuth(auth: 'right' | 'none' | 'wrong'): string {
  if (auth === 'none') return '';
  const token = auth === 'right' ? account.open_api_token : randomUUID();
  return new URLSearchParams(openApiQuery({ email: account.email, openApiToken: token })).toString();
}

async function send(request: Sent): Promise<number> {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual' });
  await response.arrayBuffer();
  return response.status;
}

function describeRequest(request: Sent): string {
  return JSON.stringify({ ...request, body: request.body?.slice(0, 400) });
}

/** No 5xx; bot calls may answer 502 and 504 (their contract for a webhook that fails or times out). */
async function expectNoServerError(request: Sent): Promise<void> {
  const status = await send(request);
  const allowed = request.url.includes('/v1/bot/') && (status === 502 || status === 504);
  if (status >= 500 && !allowed) throw new Error(`${status} for ${describeRequest(request)}`);
}

const authArbitrary = fc.constantFrom<'right' | 'none' | 'wrong'>('right', 'right', 'right', 'right', 'none', 'wrong');

function requestFor(route: Route): fc.Arbitrary<Sent> {
  const pathArbitrary = fc
    .array(hostilePathParameter, { minLength: 3, maxLength: 3 })
    .map((values) => {
      let index = 0;
      return route.path.replace(/\{[^}]+\}/g, () => values[index++]);
    })
    .chain((path) => fc.oneof({ weight: 4, arbitrary: fc.constant(path) }, { weight: 1, arbitrary: caseVariant(path) }));
  const body =
    route.path === '/v1/events'
      ? ingestEventText(account.id)
      : route.path === '/v1/events/batch'
        ? fc.array(ingestEventText(account.id), { maxLength: 5 }).map((events) => `{"events":[${events.join(',')}]}`)
        : hostileBody(route.bodyFields);
  return fc
    .record({ path: pathArbitrary, query: hostileQuery(route.queryNames), auth: authArbitrary, contentType: hostileContentType, extra: hostileHeaders, body, withBody: fc.boolean() })
    .map(({ path, query, auth, contentType, extra, body: text, withBody }) => {
      const openApi = route.path.startsWith('/open_api_v1');
      const queryText = [openApi ? openApiAuth(auth) : '', query].filter(Boolean).join('&');
      const headers: Record<string, string> = { ...extra, ...authHeaders(route, auth), ...(contentType ? { 'content-type': contentType } : {}) };
      const hasBody = route.method !== 'GET' && route.method !== 'HEAD' && (withBody || route.method === 'POST');
      return { method: route.method, url: `${route.app.url}${path}${queryText ? `?${queryText}` : ''}`, headers, ...(hasBody ? { body: text } : {}) };
    });
}

/** How many series an app's /metrics serves (process metrics included: their label sets are fixed). */
async function seriesCount(app: RunningApp): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  return text.split('\n').filter((line) => line && !line.startsWith('#')).length;
}

beforeAll(async () => {
  await namespace.setUp();
  const settings = { ...namespace.overrides, OPEN_API_RATE_LIMIT: '1000000' };
  apps.configApi = await startApp(ConfigApiModule, settings);
  apps.ingest = await startApp(IngestModule, settings);
  apps.worker = await startApp(DeliveryWorkerModule, settings);
  account = await createAccount(apps.configApi);
  for (let session = 0; session < PORTAL_SESSION_COUNT; session += 1) portalSessions.push(await portalToken(apps.configApi, account.id));
  routes = (await Promise.all(Object.values(apps).map(routesOf))).flat();
  for (const app of Object.values(apps)) {
    routes.push({ app, method: 'GET', path: '/docs', queryNames: [], bodyFields: [] }, { app, method: 'GET', path: '/docs/openapi.json', queryNames: [], bodyFields: [] });
  }
  routes.push({ app: apps.configApi, method: 'GET', path: '/admin/{file}', queryNames: [], bodyFields: [] });
});

afterAll(async () => {
  for (const app of Object.values(apps)) await app?.close();
  await namespace.tearDown();
});

describe(`fuzzing every route (seed ${SEED})`, () => {
  const before: Record<string, number> = {};

  it('finds every app serving routes from its docs', async () => {
    for (const [name, app] of Object.entries(apps)) before[name] = await seriesCount(app);
    const paths = new Set(routes.map((route) => route.path));
    for (const path of ['/open_api_v1/set_url', '/admin/v1/events', '/v1/events/batch', '/v1/bot/task-push', '/health/ready', '/portal/v1/settings', '/portal/v1/redeliver', '/portal/v1/test-event', '/open_api_v1/events', '/open_api_v1/destinations', '/open_api_v1/destinations/{id}', '/open_api_v1/destinations/{id}/resume', '/portal/v1/destinations/{id}', '/admin/v1/accounts/{id}/destinations/{destination_id}/pause']) {
      expect(paths).toContain(path);
    }
  });

  it('answers no generated request of any route with a server error', async () => {
    const arbitrary = fc.constantFrom(...routes).chain(requestFor);
    await fc.assert(fc.asyncProperty(arbitrary, expectNoServerError), { seed: SEED, numRuns: runs(2500), endOnFailure: true });
  });

  it('answers no destination body (CONTRACT §11) with a server error, through each door', async () => {
    const created = (await fetch(`${apps.configApi.url}/admin/v1/accounts/${account.id}/destinations`, {
      method: 'POST',
      headers: ADMIN_HEADERS,
      body: JSON.stringify({ type: 'webhook', target: 'https://hooks.example.com/fuzz' }),
    }).then((response) => response.json())) as Json;
    const id = created.id as string;
    const doors: { method: string; url: () => string; headers: Record<string, string> }[] = [
      { method: 'POST', url: () => `${apps.configApi.url}/open_api_v1/destinations?${openApiAuth('right')}`, headers: {} },
      { method: 'PUT', url: () => `${apps.configApi.url}/open_api_v1/destinations/${id}?${openApiAuth('right')}`, headers: {} },
      { method: 'PUT', url: () => `${apps.configApi.url}/portal/v1/destinations/${id}`, headers: { authorization: portalBearer() } },
      { method: 'POST', url: () => `${apps.configApi.url}/admin/v1/accounts/${account.id}/destinations`, headers: { authorization: ADMIN_HEADERS.authorization } },
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...doors), destinationBody, async (door, body) => {
        await expectNoServerError({ method: door.method, url: door.url(), headers: { ...door.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      }),
      { seed: SEED + 2, numRuns: runs(600), endOnFailure: true },
    );
  });

  it('answers no generated path or method with a server error', async () => {
    const known = [...new Set(routes.map((route) => route.path.replace(/\{[^}]+\}/g, '1')))];
    const pathArbitrary = fc.oneof(
      fc.constantFrom(...known).chain(caseVariant),
      fc.array(hostileText.map(encodeAny), { minLength: 1, maxLength: 5 }).map((segments) => `/${segments.join('/')}`),
      fc.tuple(fc.constantFrom(...known), hostileText).map(([path, tail]) => `${path}/${encodeAny(tail)}`),
    );
    const arbitrary = fc.record({
      app: fc.constantFrom(...Object.values(apps)),
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
      path: pathArbitrary,
      body: hostileJson.map((value) => JSON.stringify(value) ?? ''),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, ({ app, method, path, body }) =>
        expectNoServerError({ method, url: `${app.url}${path}`, headers: { ...ADMIN_HEADERS }, ...(method === 'GET' || method === 'HEAD' ? {} : { body }) }),
      ),
      { seed: SEED + 1, numRuns: runs(1500), endOnFailure: true },
    );
  });

  it('leaves every process alive and ready, its /metrics not grown with what was sent', async () => {
    for (const [name, app] of Object.entries(apps)) {
      expect({ name, live: (await fetch(`${app.url}/health/live`)).status, ready: (await fetch(`${app.url}/health/ready`)).status }).toEqual({ name, live: 200, ready: 200 });
      // Thousands of distinct paths and values were sent; label values from fixed sets add a bounded few series.
      const grown = (await seriesCount(app)) - before[name];
      expect({ name, grownBelow300: grown < 300 }).toEqual({ name, grownBelow300: true });
    }
    const metrics = await (await fetch(`${apps.configApi.url}/metrics`)).text();
    const operations = new Set([...metrics.matchAll(/^open_api_requests_total\{operation="([^"]*)"/gm)].map((match) => match[1]));
    const declared = routes.filter((route) => route.path.startsWith('/open_api_v1/')).map((route) => route.path.slice('/open_api_v1/'.length));
    expect([...operations].filter((operation) => operation !== 'unmatched' && !declared.includes(operation))).toEqual([]);
    expect(operations).toContain('unmatched');
  });
});
