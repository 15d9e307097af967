import { Test } from '@nestjs/testing';
import { environmentOrExit } from '../bootstrap';
import { ENVIRONMENT, processEnvironment, RuntimeConfigModule } from './config.module';
import type { Environment } from './environment';

describe('settings of a process', () => {
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
