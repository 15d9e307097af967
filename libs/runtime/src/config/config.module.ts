import { Global, Module } from '@nestjs/common';
import { loadEnvironment } from './environment';

export const ENVIRONMENT = Symbol('ENVIRONMENT');

/** Makes the validated Environment injectable as `@Inject(ENVIRONMENT)`. */
@Global()
@Module({
  providers: [{ provide: ENVIRONMENT, useFactory: () => loadEnvironment() }],
  exports: [ENVIRONMENT],
})
export class RuntimeConfigModule {}
