import { Global, Module } from '@nestjs/common';
import { type Environment, loadEnvironment } from './environment';
import { SecretBox } from '../secrets/secret-box';

export const ENVIRONMENT = Symbol('ENVIRONMENT');

/** Makes the validated Environment injectable as `@Inject(ENVIRONMENT)`, and the SecretBox built from its keys. */
@Global()
@Module({
  providers: [
    { provide: ENVIRONMENT, useFactory: () => loadEnvironment() },
    { provide: SecretBox, useFactory: (environment: Environment) => new SecretBox(environment.secrets), inject: [ENVIRONMENT] },
  ],
  exports: [ENVIRONMENT, SecretBox],
})
export class RuntimeConfigModule {}
