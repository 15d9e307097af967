import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, type OpenAPIObject, type SecuritySchemeObject, SwaggerModule } from '@nestjs/swagger';
import type { Express, Request, Response } from 'express';
import { dirname, join } from 'node:path';
import { errorCodeWord } from '../http/error.filter';
import { DOCS_ASSETS, DOCS_CSS, DOCS_JS, docsPageHtml } from './docs-page';
import { ApiErrorBody, OpenApiErrorBody } from './error-bodies';
import { ADMIN_TOKEN_SCHEME, INGEST_TOKEN_SCHEME, PORTAL_SESSION_SCHEME } from './error-responses';
import { toOpenApi31Nullability } from './openapi-31';
import { callbackBodySchemas, OUTGOING_REQUEST_MODELS, OUTGOING_REQUESTS } from './outgoing-requests';
import { operationalEventSchemas, operationalEventWebhooks } from './operational-events.docs';
import { loggableError } from '../http/database-errors';

export interface ApiDocsInfo {
  title: string;
  /** Markdown, shown at the top of /docs. */
  description: string;
}

export const DOCS_PATH = '/docs';
export const OPENAPI_DOCUMENT_PATH = '/docs/openapi.json';

/** What the apps' main.ts files do not override (the e2e tests' apps use it): the same document, a generic title. */
export const DEFAULT_DOCS_INFO: ApiDocsInfo = {
  title: 'Event callbacks',
  description: 'Event-callback (webhook) delivery service.',
};

const SECURITY_SCHEMES: Record<string, SecuritySchemeObject> = {
  [ADMIN_TOKEN_SCHEME]: {
    type: 'http',
    scheme: 'bearer',
    description: "The operators' token on `/admin/v1/*`: `Authorization: Bearer $ADMIN_TOKEN`, or a named token of `ADMIN_TOKENS` with its role.",
  },
  [PORTAL_SESSION_SCHEME]: {
    type: 'http',
    scheme: 'bearer',
    description: "An account portal's session token on `/portal/v1/*` (from `POST /portal/v1/session`): `Authorization: Bearer <token>`.",
  },
  [INGEST_TOKEN_SCHEME]: {
    type: 'http',
    scheme: 'bearer',
    description: 'One of the comma-separated `INGEST_TOKEN` values, on `/v1/*`: `Authorization: Bearer <token>`.',
  },
};

/** Only the schemes this app's operations use, so each app's document names its own tokens. */
function keepUsedSecuritySchemes(document: OpenAPIObject): void {
  const used = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      for (const requirement of (operation as { security?: Record<string, unknown>[] }).security ?? []) {
        for (const name of Object.keys(requirement)) used.add(name);
      }
    }
  }
  const schemes = document.components?.securitySchemes ?? {};
  for (const name of Object.keys(schemes)) if (!used.has(name)) delete schemes[name];
}

/**
 * The app's OpenAPI 3.1 document: every route of its controllers (with their decorators' parameters,
 * bodies and answers), the security schemes it uses, and the requests the service sends as `webhooks` (the
 * callback, the bot webhooks and the operational events).
 */
export function buildApiDocument(app: NestExpressApplication, info: ApiDocsInfo): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle(info.title)
    .setDescription(info.description)
    .setVersion('1');
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) builder.addSecurity(name, scheme);
  const document = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ApiErrorBody, OpenApiErrorBody, ...OUTGOING_REQUEST_MODELS],
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  document.webhooks = { ...structuredClone(OUTGOING_REQUESTS), ...operationalEventWebhooks() };
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...callbackBodySchemas(), ...operationalEventSchemas() } };
  keepUsedSecuritySchemes(document);
  toOpenApi31Nullability(document);
  return document;
}

/** swagger-ui-dist as @nestjs/swagger resolves it (it is that package's dependency, not ours). */
function swaggerUiDirectory(): string {
  const swagger = dirname(require.resolve('@nestjs/swagger'));
  return dirname(require.resolve('swagger-ui-dist/package.json', { paths: [swagger] }));
}

/**
 * Serves `GET /docs` (swagger-ui) and `GET /docs/openapi.json`. Plain Express routes, registered after
 * the app's middleware so they get the same security headers; the document is built on first request
 * (most processes never serve it) and then kept.
 */
export function setupApiDocs(app: NestExpressApplication, info: ApiDocsInfo = DEFAULT_DOCS_INFO): void {
  const logger = new Logger('ApiDocs');
  const http: Express = app.getHttpAdapter().getInstance();
  let documentText: string | undefined;

  http.get(OPENAPI_DOCUMENT_PATH, (_request: Request, response: Response) => {
    try {
      documentText ??= JSON.stringify(buildApiDocument(app, info));
    } catch (error) {
      logger.error(loggableError(error), 'the OpenAPI document could not be built');
      response.status(500).json({ error: errorCodeWord(500), message: 'the API document could not be built' });
      return;
    }
    response.type('application/json').setHeader('Cache-Control', 'no-cache');
    response.send(documentText);
  });

  const page = docsPageHtml(info.title);
  http.get(DOCS_PATH, (_request: Request, response: Response) => {
    response.type('html').setHeader('Cache-Control', 'no-cache');
    response.send(page);
  });

  const texts: Record<string, [string, string]> = { 'docs.css': ['css', DOCS_CSS], 'docs.js': ['js', DOCS_JS] };
  for (const [file, [type, text]] of Object.entries(texts)) {
    http.get(`${DOCS_ASSETS}/${file}`, (_request: Request, response: Response) => {
      response.type(type).setHeader('Cache-Control', 'no-cache');
      response.send(text);
    });
  }
  const ui = swaggerUiDirectory();
  for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']) {
    http.get(`${DOCS_ASSETS}/${file}`, (_request: Request, response: Response) => {
      response.sendFile(join(ui, file), { maxAge: '1d' });
    });
  }
}
