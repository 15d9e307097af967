import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { environmentOrExit } from '../bootstrap';
import { ENVIRONMENT, processEnvironment, RuntimeConfigModule } from './config.module';
import type { Environment } from './environment';

describe('settings of a process', () => {
  // The module also builds the SecretBox, which refuses to exist without a key.
  const keyBefore = process.env.SECRETS_KEY;
  beforeAll(() => {
    process.env.SECRETS_KEY = `test:${randomBytes(32).toString('base64')}`;
  });
  afterAll(() => {
    if (keyBefore === undefined) delete process.env.SECRETS_KEY;
    else process.env.SECRETS_KEY = keyBefore;
  });

  it('are parsed once: the bootstrap check and the injected ENVIRONMENT are the same object', async () => {
    const checked = environmentOrExit('test');
    const moduleRef = await Test.createTestingModule({ imports: [RuntimeConfigModule] }).compile();
    const injected = moduleRef.get<Environment>(ENVIRONMENT);
    expect(injected).toBe(checked);
    expect(processEnvironment()).toBe(checked);
    expect(injected.database.url).toEqual(expect.stringMatching(/^postgres(ql)?:\/\//));
    await moduleRef.close();
  });
});
