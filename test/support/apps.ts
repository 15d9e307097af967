import type { INestApplication, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { configureHttpApp, ENVIRONMENT, type Environment, loadEnvironment } from '@app/runtime';

export interface RunningApp {
  app: INestApplication;
  url: string;
  environment: Environment;
  close(): Promise<void>;
}

/**
 * Starts one of the real app modules in this process on a random loopback port, with the test run's
 * database and Redis prefix, plus any setting overrides (e.g. a short RETRY_SCHEDULE).
 */
export async function startApp(rootModule: Type<unknown>, overrides: Record<string, string> = {}, options: { port?: number } = {}): Promise<RunningApp> {
  const environment = loadEnvironment({ ...process.env, ...overrides });
  const moduleRef = await Test.createTestingModule({ imports: [rootModule] })
    .overrideProvider(ENVIRONMENT)
    .useValue(environment)
    .compile();
  // TEST_APP_LOGS=1 shows the apps' warnings and errors while debugging a test; quiet otherwise.
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: process.env.TEST_APP_LOGS ? ['error', 'warn'] : false });
  configureHttpApp(app);
  // A given port: for an app whose own URL must be known before it starts (PUBLIC_URL in an OIDC redirect).
  await app.listen(options.port ?? 0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    environment,
    close: () => app.close(),
  };
}
