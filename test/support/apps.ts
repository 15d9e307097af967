import type { INestApplication, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import type { IsolatedNamespace } from './isolated-namespace';
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

/** A module to start as it is, or with settings of its own on top of the suite's. */
export type AppToStart = Type<unknown> | [rootModule: Type<unknown>, settings: Record<string, string>];

export interface UseAppsOptions {
  /** The suite's own database and Redis prefix: set up before the apps start, torn down after they close. */
  namespace?: IsolatedNamespace;
  /** Settings every app gets, read when they start (e.g. the address of a Redis an earlier hook started). */
  overrides?: () => Record<string, string>;
}

/**
 * A RunningApp that stands for one a hook starts later, so a suite can name its apps where it declares
 * them and its tests read them as plain variables.
 */
function startedLater(name: string, get: () => RunningApp | undefined): RunningApp {
  const started = (): RunningApp => {
    const app = get();
    if (app === undefined) throw new Error(`the app ${name} is there from the first test on, not before`);
    return app;
  };
  return {
    get app() {
      return started().app;
    },
    get url() {
      return started().url;
    },
    get environment() {
      return started().environment;
    },
    close: () => started().close(),
  };
}

/**
 * For the calling file or describe block: starts `apps` in this process in the order given before its
 * tests, and closes them in the reverse order after them. Each one is there from the first test on.
 */
export function useApps<Name extends string>(apps: Record<Name, AppToStart>, options: UseAppsOptions = {}): Record<Name, RunningApp> {
  const running = new Map<Name, RunningApp>();
  beforeAll(async () => {
    await options.namespace?.setUp();
    const shared = { ...options.namespace?.overrides, ...options.overrides?.() };
    for (const [name, start] of Object.entries(apps) as [Name, AppToStart][]) {
      const [rootModule, settings] = Array.isArray(start) ? start : [start, {}];
      running.set(name, await startApp(rootModule, { ...shared, ...settings }));
    }
  });
  afterAll(async () => {
    for (const app of [...running.values()].reverse()) await app.close();
    running.clear();
    await options.namespace?.tearDown();
  });
  return Object.fromEntries(Object.keys(apps).map((name) => [name, startedLater(name, () => running.get(name as Name))])) as Record<Name, RunningApp>;
}
