import { spawnBuiltApp, type BuiltAppProcess } from '../support/built-app';

/** A start prints the app's own lines; Nest's route-mapping and module lines only at LOG_LEVEL=debug. */
jest.setTimeout(120_000);

const started: BuiltAppProcess[] = [];

afterAll(async () => {
  for (const app of started) await app.terminate(10_000);
});

async function startupOutput(logLevel: string): Promise<string> {
  const app = spawnBuiltApp('config-api', { LOG_LEVEL: logLevel });
  started.push(app);
  await app.waitForOutput('config-api listening on', 90_000);
  return app.output();
}

it("prints no route-mapping or module lines at the default level, and the app's own start line", async () => {
  const output = await startupOutput('info');
  expect(output).toContain('config-api listening on');
  expect(output).not.toContain('Mapped {');
  for (const context of ['RouterExplorer', 'RoutesResolver', 'InstanceLoader', 'NestFactory']) expect(output).not.toContain(`"context":"${context}"`);
});

it('prints them at LOG_LEVEL=debug', async () => {
  const output = await startupOutput('debug');
  expect(output).toContain('Mapped {/health/live, GET} route');
  expect(output).toContain('"context":"InstanceLoader"');
});
