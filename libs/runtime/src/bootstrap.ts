import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { ENVIRONMENT, processEnvironment } from './config/config.module';
import { type Environment, EnvironmentError, isAppName } from './config/environment';
import { type ApiDocsInfo, setupApiDocs } from './docs/api-docs';
import { HttpErrorFilter } from './http/error.filter';
import { FrameworkLogger } from './logging/framework-logger';
import { requestLog } from './logging/logging';
import { refuseHostileRequests } from './http/hostile-request';
import { securityHeaders } from './http/security-headers';
import { createValidationPipe } from './http/validation';
import { MAX_BODY_BYTES } from './http/routes-ahead-of-express';
import { armShutdownDeadline } from './shutdown-deadline';
import { startTracing } from './tracing/tracing';
import { SecretsKeyMissingError } from './secrets/secret-box';

/** Applies what every HTTP app needs; shared by main.ts files and the e2e tests so both run the same app. */
export function configureHttpApp(app: NestExpressApplication, docs?: ApiDocsInfo): void {
  // First, so every answer is logged and counted, a refused body or a hostile request included.
  app.use(requestLog(app.get<Environment>(ENVIRONMENT)));
  app.use(securityHeaders());
  app.useBodyParser('json', { limit: MAX_BODY_BYTES });
  app.useBodyParser('urlencoded', { limit: MAX_BODY_BYTES, extended: false });
  app.use(refuseHostileRequests);
  app.useGlobalFilters(new HttpErrorFilter());
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
  app.set('trust proxy', false);
  app.disable('x-powered-by');
  // Last, so the docs routes pass through the middleware above (security headers) like every other route.
  setupApiDocs(app, docs);
}

/**
 * Validates settings before anything starts, so a bad setting is one clear message, not a stack trace.
 * `load` narrows what is checked (the migrate command needs only the database).
 */
export function environmentOrExit(processName: string): Environment;
export function environmentOrExit<T>(processName: string, load: () => T): T;
export function environmentOrExit(processName: string, load: () => unknown = processEnvironment): unknown {
  try {
    return load();
  } catch (error) {
    if (error instanceof EnvironmentError) {
      process.stderr.write(`[${processName}] ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

export async function bootstrapHttpApp(
  processName: string,
  rootModule: Type<unknown>,
  portOf: (environment: Environment) => number,
  docs?: ApiDocsInfo,
): Promise<NestExpressApplication> {
  const environment = environmentOrExit(processName, () => processEnvironment(isAppName(processName) ? processName : undefined));
  if (!environment.secrets.current) {
    // Every app reads or writes stored secrets; refusing here is one clear line instead of a DI stack trace.
    process.stderr.write(`[${processName}] ${new SecretsKeyMissingError().message}\n`);
    process.exit(1);
  }
  const shutdown = armShutdownDeadline(processName);
  // Before the app exists, so the context manager is in place for its first request.
  startTracing(processName, environment.tracing);
  const app = await NestFactory.create<NestExpressApplication>(rootModule, { bufferLogs: true, bodyParser: false });
  // Nest's start-up lines (every route mapped, every module loaded) at debug: a start prints the app's own lines.
  app.useLogger(new FrameworkLogger(app.get(Logger)));
  configureHttpApp(app, docs);
  shutdown.appReady();
  const port = portOf(environment);
  const host = environment.listenHost;
  if (host === null) await app.listen(port);
  else await app.listen(port, host);
  const shown = host === null ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  app.get(Logger).log(`${processName} listening on http://${shown}:${port}${host === null ? ' (every interface)' : ''}`);
  return app;
}
