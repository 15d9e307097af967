import SwaggerParser from '@apidevtools/swagger-parser';
import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject, OperationObject, ParameterObject, SchemaObject } from '@nestjs/swagger';
import { EVENT_ACTIONS } from '@app/payloads';
import { type ApiDocsInfo, buildApiDocument } from '@app/runtime/docs';
import { CONFIG_API_DOCS } from '../../apps/config-api/src/config-api.docs';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DELIVERY_WORKER_DOCS } from '../../apps/delivery-worker/src/delivery-worker.docs';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { INGEST_DOCS } from '../../apps/ingest/src/ingest.docs';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { adminCall } from '../support/admin-client';
import { type RunningApp, startApp, useApps } from '../support/apps';
import { launchBrowser } from '../support/browser';
import { createAccount } from '../support/fixtures';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** `admin/v1/accounts` + `:id` → `/admin/v1/accounts/{id}`, as OpenAPI writes paths. */
function openApiPath(...parts: string[]): string {
  const joined = `/${parts.join('/')}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
  return joined.replace(/:(\w+)/g, '{$1}');
}

/** Every route the app's controllers register, read from Nest's own routing metadata. */
function controllerRoutes(app: NestExpressApplication): string[] {
  const scanner = new MetadataScanner();
  const routes = new Set<string>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type<unknown>;
      const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as object;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (paths === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod].toLowerCase();
        for (const prefix of prefixes) for (const path of [paths].flat()) routes.add(`${method} ${openApiPath(prefix, path)}`);
      }
    }
  }
  return [...routes].sort();
}

function operations(document: OpenAPIObject): [string, OperationObject][] {
  const found: [string, OperationObject][] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) found.push([`${method} ${path}`, operation]);
    }
  }
  return found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function schema(document: OpenAPIObject, name: string): SchemaObject {
  const found = document.components?.schemas?.[name] as SchemaObject | undefined;
  if (!found) throw new Error(`no schema ${name} in the document`);
  return found;
}

const APPS: [string, Type<unknown>, ApiDocsInfo, string][] = [
  ['config-api', ConfigApiModule, CONFIG_API_DOCS, 'admin-token'],
  ['ingest', IngestModule, INGEST_DOCS, 'ingest-token'],
  ['delivery-worker', DeliveryWorkerModule, DELIVERY_WORKER_DOCS, ''],
];

const servedDocument = async (app: RunningApp): Promise<OpenAPIObject> => (await (await fetch(`${app.url}/docs/openapi.json`)).json()) as OpenAPIObject;

describe.each(APPS)('%s API documentation', (name, rootModule, info, tokenScheme) => {
  let running: RunningApp;
  let document: OpenAPIObject;

  beforeAll(async () => {
    running = await startApp(rootModule);
    const response = await fetch(`${running.url}/docs/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    document = (await response.json()) as OpenAPIObject;
  });
  afterAll(async () => {
    await running.close();
  });

  it('is a valid OpenAPI 3.1 document for a standard validator, as served and with the app title', async () => {
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
    // main.ts passes the app's own title and introduction; the e2e app serves the same paths under a generic one.
    const titled = buildApiDocument(running.app as NestExpressApplication, info);
    expect(titled.info).toMatchObject({ title: info.title, description: info.description });
    await expect(SwaggerParser.validate(structuredClone(titled) as never)).resolves.toBeDefined();
    expect(Object.keys(titled.paths).sort()).toEqual(Object.keys(document.paths).sort());
  });

  it('documents exactly the routes the app serves, each with a summary, its success answer and its errors', () => {
    const served = controllerRoutes(running.app as NestExpressApplication);
    expect(served.length).toBeGreaterThan(2);
    expect(operations(document).map(([route]) => route)).toEqual(served);

    for (const [route, operation] of operations(document)) {
      expect({ route, summary: Boolean(operation.summary) }).toEqual({ route, summary: true });
      // A redirect is the success of the console's sign-in routes (/admin/login, /admin/callback).
      const success = Object.entries(operation.responses).filter(([status]) => /^[23]\d\d$/.test(status));
      expect({ route, success: success.length > 0 && success.every(([, answer]) => (answer as { description: string }).description !== '') }).toEqual({ route, success: true });
      const guarded = route.includes(' /admin/v1/') || route.includes(' /v1/');
      if (guarded) {
        expect({ route, security: operation.security }).toEqual({ route, security: [{ [tokenScheme]: [] }] });
        expect({ route, has401: '401' in operation.responses }).toEqual({ route, has401: true });
      }
      if (route.includes(' /portal/v1/') && !route.endsWith(' /portal/v1/session')) {
        expect({ route, security: operation.security }).toEqual({ route, security: [{ 'portal-session': [] }] });
        expect({ route, has401: '401' in operation.responses }).toEqual({ route, has401: true });
      }
    }
  });

  it('declares only the bearer scheme this app uses', () => {
    const schemes = document.components?.securitySchemes ?? {};
    // config-api also has the account portal's session tokens.
    const expected = tokenScheme === 'admin-token' ? ['admin-token', 'portal-session'] : tokenScheme ? [tokenScheme] : [];
    expect(Object.keys(schemes).sort()).toEqual(expected);
    if (tokenScheme) expect(schemes[tokenScheme]).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents health and metrics', () => {
    expect(document.paths['/health/live']?.get?.summary).toBeTruthy();
    expect(document.paths['/health/ready']?.get?.responses).toHaveProperty('503');
    const metrics = document.paths['/metrics']?.get?.responses['200'] as { content?: Record<string, unknown> } | undefined;
    expect(Object.keys(metrics?.content ?? {})[0]).toContain('text/plain');
  });

  it('describes the callback and bot webhook requests the service sends', () => {
    const webhooks = document.webhooks ?? {};
    expect(Object.keys(webhooks).sort()).toEqual(['Destination_disabled', 'Destination_failing', 'Destination_recovered', 'bot-message-trigger', 'bot-task-push', 'callback']);

    const callback = webhooks.callback.post as OperationObject;
    const headers = (callback.parameters as ParameterObject[]).filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name);
    expect(headers).toEqual(expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature']));
    const content = (callback.requestBody as { content: Record<string, { schema: { $ref: string } }> }).content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(content['application/json'].schema.$ref).toBe('#/components/schemas/CallbackBody');
    const body = schema(document, 'CallbackBody') as SchemaObject & { discriminator: { mapping: Record<string, string> } };
    expect(EVENT_ACTIONS).toHaveLength(11);
    expect(Object.keys(body.discriminator.mapping)).toEqual([...EVENT_ACTIONS]);
    expect(body.oneOf).toHaveLength(11);
    expect(schema(document, 'CallbackBody_Customer_create').properties?.message).toEqual({ $ref: '#/components/schemas/CustomerCreateMessage' });
    const customer = schema(document, 'CustomerCreateMessage');
    expect(customer.required).toEqual(['id']);
    expect(customer.properties?.id).toMatchObject({ type: 'integer' });
    expect(customer.properties?.description).toMatchObject({ type: ['string', 'null'] });
    expect(customer.properties?.cellphones).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/CellphoneEntry' } });

    const failing = (webhooks.Destination_failing.post as OperationObject).requestBody as { content: Record<string, { schema: { $ref: string } }> };
    expect(failing.content['application/json'].schema.$ref).toBe('#/components/schemas/OperationalEvent_Destination_failing');
    expect(schema(document, 'OperationalEvent_Destination_failing').properties?.message).toEqual({ $ref: '#/components/schemas/OperationalEventMessage' });
    const operational = schema(document, 'OperationalEventMessage');
    expect(operational.required).toEqual(['destination_id', 'target', 'reason', 'at']);
    expect(operational.properties?.target).toMatchObject({ type: ['string', 'null'] });

    const trigger = webhooks['bot-message-trigger'].post as OperationObject;
    expect((trigger.parameters as ParameterObject[]).map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual(['query:timestamp', 'query:sign']);
    expect(trigger.responses['2XX']).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/MessageTriggerAnswerDto' } } } });

    const taskPush = webhooks['bot-task-push'].post as OperationObject;
    expect(taskPush.parameters ?? []).toEqual([]);
    expect(schema(document, 'TaskPushWebhookBody').required).toEqual(expect.arrayContaining(['taskNodeId', 'sessionId', 'timestamp', 'sign']));
    expect(schema(document, 'TaskPushAnswerDto').properties?.routeType).toMatchObject({ enum: [1, 2, null] });
    expect(JSON.stringify(schema(document, 'TaskPushAnswerDto').properties?.message)).toContain('#/components/schemas/BotMessageDto');
    expect(schema(document, 'CustomCardDto').required).toEqual(['cardList']);
  });

  it('serves /docs as a page with nothing inline, its assets from this origin, under the strict CSP', async () => {
    const response = await fetch(`${running.url}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    expect(html).toContain('<div id="swagger-ui"></div>');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son\w+=/i);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]).filter((url) => url.startsWith('/docs/assets/'));
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) expect({ asset, status: (await fetch(`${running.url}${asset}`)).status }).toEqual({ asset, status: 200 });
  });
});

describe('config-api documentation details', () => {
  const { running } = useApps({ running: ConfigApiModule });
  let document: OpenAPIObject;
  beforeAll(async () => {
    document = await servedDocument(running);
  });

  it('gives every Open API operation the signed query and the error codes with their statuses', () => {
    const openApi = operations(document).filter(([route]) => route.includes(' /open_api_v1/'));
    expect(openApi.map(([route]) => route).sort()).toEqual([
      'delete /open_api_v1/destinations/{id}',
      'get /open_api_v1/destinations',
      'get /open_api_v1/events',
      'get /open_api_v1/push_settings',
      'post /open_api_v1/destinations',
      'post /open_api_v1/destinations/{id}/pause',
      'post /open_api_v1/destinations/{id}/resume',
      'post /open_api_v1/portal_link',
      'post /open_api_v1/send_test_event',
      'post /open_api_v1/set_delivery_options',
      'post /open_api_v1/set_permissions',
      'post /open_api_v1/set_push_content_type',
      'post /open_api_v1/set_url',
      'put /open_api_v1/destinations/{id}',
    ]);
    for (const [route, operation] of openApi) {
      const query = (operation.parameters as ParameterObject[]).filter((parameter) => parameter.in === 'query' && parameter.required);
      expect({ route, query: query.map((parameter) => parameter.name).sort() }).toEqual({ route, query: ['email', 'nonce', 'sign', 'sign_version', 'timestamp'] });
      const unauthorized = operation.responses['401'] as unknown as { content: { 'application/json': { schema: { $ref: string }; examples: Record<string, { value: { code: number } }> } } };
      expect(unauthorized.content['application/json'].schema.$ref).toBe('#/components/schemas/OpenApiErrorBody');
      const codes = Object.values(unauthorized.content['application/json'].examples).map((example) => example.value.code).sort();
      expect({ route, codes }).toEqual({ route, codes: [2059, 20621, 20622, 20623, 20624] });
      expect({ route, statuses: Object.keys(operation.responses).sort() }).toEqual({
        route,
        statuses: expect.arrayContaining(['200', '401', '429', '503']),
      });
    }
    const feed = document.paths['/open_api_v1/events'].get as OperationObject;
    expect(JSON.stringify(feed.responses['400'])).toContain('"code":2000');
    const setUrl = document.paths['/open_api_v1/set_url'].post as OperationObject;
    expect(Object.keys(setUrl.responses).sort()).toEqual(['200', '400', '401', '413', '415', '429', '503']);
    expect(JSON.stringify(setUrl.responses['400'])).toContain('"code":2000');
    expect(schema(document, 'OpenApiErrorBody').required?.sort()).toEqual(['code', 'exception', 'message']);
  });

  it('documents the error bodies the apps really send', async () => {
    const admin = await fetch(`${running.url}/admin/v1/events`);
    expect(admin.status).toBe(401);
    const adminBody = (await admin.json()) as Record<string, unknown>;
    const adminSchema = schema(document, 'ApiErrorBody');
    expect(Object.keys(adminBody).every((key) => key in (adminSchema.properties ?? {}))).toBe(true);
    expect(adminSchema.required?.sort()).toEqual(Object.keys(adminBody).sort());

    const open = await fetch(`${running.url}/open_api_v1/push_settings?sign_version=v2&timestamp=1&nonce=n&email=a@b.c&sign=x`);
    expect(open.status).toBe(401);
    const openBody = (await open.json()) as { code: number; exception: Record<string, unknown> };
    expect(Object.keys(openBody).sort()).toEqual(['code', 'exception', 'message']);
    expect(openBody.code).toBe(2059);
    expect(Object.keys(openBody.exception)).toEqual(['message']);
  });

  it('documents the success answers the admin API really sends, field for field', async () => {
    // The models are hand-written beside the types the routes answer (and `implements` them): the
    // answers of a real config-api hold exactly the fields the document names, no more, no fewer.
    const fieldsOf = (name: string): string[] => Object.keys(schema(document, name).properties ?? {}).sort();
    const account = await createAccount(running);
    const view = await adminCall(running, 'GET', `/admin/v1/accounts/${account.id}`);
    expect(Object.keys(view.body).sort()).toEqual(fieldsOf('AccountModel'));
    expect(Object.keys(view.body.lane as object).sort()).toEqual(fieldsOf('EndpointLaneModel'));
    const options = await adminCall(running, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { max_per_second: 5 });
    expect(Object.keys(options.body).sort()).toEqual(fieldsOf('AccountModel'));
    const rotated = await adminCall(running, 'POST', `/admin/v1/accounts/${account.id}/rotate-token`);
    expect(Object.keys(rotated.body).sort()).toEqual(fieldsOf('RotatedTokenModel'));
    const deletion = await adminCall(running, 'DELETE', `/admin/v1/accounts/${account.id}`);
    expect(Object.keys(deletion.body).sort()).toEqual(fieldsOf('AccountDeletionModel'));
  });

  it('documents the admin API behind the admin token with its error statuses', () => {
    const admin = operations(document).filter(([route]) => route.includes(' /admin/v1/'));
    expect(admin.length).toBeGreaterThanOrEqual(12);
    const statuses = new Set(admin.flatMap(([, operation]) => Object.keys(operation.responses)));
    for (const status of ['400', '401', '404', '409', '413', '422', '503']) expect({ status, documented: statuses.has(status) }).toEqual({ status, documented: true });
  });

  it('renders in Chromium under the CSP with no violations', async () => {
    const browser = await launchBrowser();
    try {
      await browser.page.goto(`${running.url}/docs`);
      await browser.page.locator('.opblock').first().waitFor({ timeout: 20000 });
      expect(await browser.page.locator('.opblock').count()).toBeGreaterThanOrEqual(operations(document).length);
      await expect(browser.page.locator('.info .title').first().textContent()).resolves.toContain('Event callbacks');
      await expect(browser.page.getByText('/open_api_v1/set_url', { exact: true }).count()).resolves.toBeGreaterThan(0);
      await expect(browser.page.getByText('Webhooks', { exact: true }).count()).resolves.toBeGreaterThan(0);
      await browser.screenshot('api-docs-config-api');
      await browser.page.getByText('callback', { exact: true }).first().click();
      await browser.page.getByText('webhook-signature', { exact: true }).first().waitFor({ timeout: 10000 });
      await browser.screenshot('api-docs-config-api-callback');
      expect(browser.problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('ingest documentation details', () => {
  const { running } = useApps({ running: IngestModule });
  let document: OpenAPIObject;
  beforeAll(async () => {
    document = await servedDocument(running);
  });

  it('documents the event and bot bodies with their error statuses', () => {
    const ingest = document.paths['/v1/events'].post as OperationObject;
    expect(Object.keys(ingest.responses).sort()).toEqual(['200', '202', '400', '401', '404', '409', '413', '422', '503']);
    expect(schema(document, 'IngestEventDto').required?.sort()).toEqual(['account_id', 'action', 'message']);
    expect(schema(document, 'IngestEventDto').properties?.action).toMatchObject({ enum: [...EVENT_ACTIONS] });
    const taskPush = document.paths['/v1/bot/task-push'].post as OperationObject;
    expect(Object.keys(taskPush.responses)).toEqual(expect.arrayContaining(['200', '404', '422', '502', '504']));
  });
});
