import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { IngestModule } from '../../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from './apps';
import { createAccount, type TestAccount } from './fixtures';

export interface ConfigApiAndIngest {
  configApi: RunningApp;
  ingest: RunningApp;
  /** A fresh account, created through the admin API. */
  account: TestAccount;
}

/**
 * Registers the suite's set-up: config-api and ingest in this process and one fresh account, closed
 * after the suite. The fields are filled in by beforeAll: read them inside tests, not at definition time.
 */
export function useConfigApiAndIngest(): ConfigApiAndIngest {
  const suite = {} as ConfigApiAndIngest;
  beforeAll(async () => {
    suite.configApi = await startApp(ConfigApiModule);
    suite.ingest = await startApp(IngestModule);
    suite.account = await createAccount(suite.configApi);
  });
  afterAll(async () => {
    await suite.ingest?.close();
    await suite.configApi?.close();
  });
  return suite;
}
