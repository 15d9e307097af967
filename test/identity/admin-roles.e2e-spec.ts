import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { AdminAccessGuard } from '../../apps/config-api/src/admin/identity/admin-access.guard';
import { PERMISSION_METADATA } from '../../apps/config-api/src/admin/identity/permission.decorator';
import { AUDIT_METADATA } from '../../apps/config-api/src/audit/audit.decorator';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, ingestSampleEvent } from '../support/fixtures';
import { IngestModule } from '../../apps/ingest/src/ingest.module';

const VIEWER = 'viewer-token-'.padEnd(40, 'v');
const OPERATOR = 'operator-token-'.padEnd(40, 'o');
const ADMIN = 'named-admin-token-'.padEnd(40, 'a');
export const NAMED_TOKENS = `ada-viewer:viewer:${VIEWER},otto:operator:${OPERATOR},root-bot:admin:${ADMIN}`;

interface Route {
  method: string;
  path: string;
  permission: unknown;
  audit: unknown;
  guarded: boolean;
}

function joinPath(...parts: unknown[]): string {
  return parts
    .flatMap((part) => (Array.isArray(part) ? part : [part]))
    .filter((part): part is string => typeof part === 'string' && part !== '' && part !== '/')
    .map((part) => part.replace(/^\/|\/$/g, ''))
    .join('/');
}

/** Every route of every controller Nest loaded, with what the admin guard would read of it. */
function routesOf(app: RunningApp): Route[] {
  const routes: Route[] = [];
  for (const module of app.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const classGuards = (Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? [];
      for (const name of Object.getOwnPropertyNames(controller.prototype).filter((key) => key !== 'constructor')) {
        // The descriptor's value: reading a getter off the prototype would run it.
        const handler = Object.getOwnPropertyDescriptor(controller.prototype, name)?.value as unknown;
        if (typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const methodGuards = (Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? [];
        routes.push({
          method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number],
          path: `/${joinPath(Reflect.getMetadata(PATH_METADATA, controller), Reflect.getMetadata(PATH_METADATA, handler))}`,
          permission: Reflect.getMetadata(PERMISSION_METADATA, handler),
          audit: Reflect.getMetadata(AUDIT_METADATA, handler),
          guarded: [...classGuards, ...methodGuards].includes(AdminAccessGuard),
        });
      }
    }
  }
  return routes;
}

async function call(app: RunningApp, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${app.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('admin roles (CONTRACT §15)', () => {
  let api: RunningApp;
  let ingest: RunningApp;
  beforeAll(async () => {
    api = await startApp(ConfigApiModule, { ADMIN_TOKENS: NAMED_TOKENS });
    ingest = await startApp(IngestModule);
  });
  afterAll(async () => {
    await ingest?.close();
    await api?.close();
  });

  it('every admin route is guarded and declares its permission; GETs only read', () => {
    const routes = routesOf(api);
    const admin = routes.filter((route) => route.path.startsWith('/admin/v1/'));
    expect(admin.length).toBeGreaterThan(30);
    const undeclared = admin.filter((route) => !route.guarded || !['read', 'operate', 'administer'].includes(route.permission as string));
    expect(undeclared).toEqual([]);
    // A read permission on a write would let a viewer change things.
    expect(admin.filter((route) => route.method !== 'GET' && route.permission === 'read')).toEqual([]);
    // The guard is never on routes outside the admin API (the portal and the Open API have their own).
    expect(routes.filter((route) => route.guarded && !route.path.startsWith('/admin/'))).toEqual([]);
  });

  it('every write of the admin API, the Open API and the portal names its audit action', () => {
    const writes = routesOf(api).filter((route) => route.method !== 'GET' && /^\/(admin\/v1|open_api_v1|portal\/v1)\//.test(route.path));
    expect(writes.length).toBeGreaterThan(40);
    expect(writes.filter((route) => typeof route.audit !== 'string' || !/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/.test(route.audit))).toEqual([]);
  });

  it('a viewer reads, and is refused operator and admin writes with 403 naming the role', async () => {
    const account = await createAccount(api);
    expect((await call(api, VIEWER, 'GET', `/admin/v1/accounts/${account.id}`)).status).toBe(200);
    expect((await call(api, VIEWER, 'GET', '/admin/v1/events?limit=1')).status).toBe(200);
    const enable = await call(api, VIEWER, 'POST', `/admin/v1/accounts/${account.id}/endpoint/enable`);
    expect(enable.status).toBe(403);
    expect(enable.body).toEqual({ error: 'forbidden', message: expect.stringMatching(/role viewer .*needs the role operator/) as unknown });
    const create = await call(api, VIEWER, 'POST', '/admin/v1/accounts', { email: `viewer-${Date.now()}@example.com` });
    expect(create.status).toBe(403);
    expect(create.body.message).toMatch(/role viewer .*needs the role admin/);
  });

  it('an operator redelivers and enables endpoints, and may not create accounts or rotate secrets', async () => {
    const account = await createAccount(api);
    const eventId = await ingestSampleEvent(ingest, account.id);
    expect((await call(api, OPERATOR, 'GET', `/admin/v1/accounts/${account.id}`)).status).toBe(200);
    expect((await call(api, OPERATOR, 'POST', `/admin/v1/accounts/${account.id}/endpoint/enable`)).status).toBe(200);
    expect((await call(api, OPERATOR, 'POST', `/admin/v1/events/${eventId}/redeliver`)).status).toBe(202);
    const rotate = await call(api, OPERATOR, 'POST', `/admin/v1/accounts/${account.id}/rotate-secret`);
    expect(rotate.status).toBe(403);
    expect(rotate.body).toEqual({ error: 'forbidden', message: expect.stringMatching(/role operator .*needs the role admin/) as unknown });
    expect((await call(api, OPERATOR, 'GET', '/admin/v1/audit')).status).toBe(403);
  });

  it('a named admin does everything ADMIN_TOKEN does', async () => {
    const created = await call(api, ADMIN, 'POST', '/admin/v1/accounts', { email: `named-admin-${Date.now()}@example.com` });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    expect((await call(api, ADMIN, 'POST', `/admin/v1/accounts/${id}/rotate-secret`)).status).toBe(200);
    expect((await call(api, ADMIN, 'POST', `/admin/v1/accounts/${id}/endpoint/enable`)).status).toBe(200);
    expect((await call(api, ADMIN, 'GET', `/admin/v1/accounts/${id}`)).status).toBe(200);
  });

  it('a token that is not one of them is 401, as before', async () => {
    const answer = await call(api, VIEWER.replace(/v$/, 'x'), 'GET', '/admin/v1/accounts');
    expect(answer).toEqual({ status: 401, body: { error: 'unauthorized', message: 'invalid bearer token' } });
  });
});
