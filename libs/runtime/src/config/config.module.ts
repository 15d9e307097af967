import { Global, Module } from '@nestjs/common';
import { type Environment, loadEnvironment } from './environment';
import { SecretBox } from '../secrets/secret-box';

export const ENVIRONMENT = Symbol('ENVIRONMENT');

let processSettings: Environment | undefined;

/**
 * This process's settings, parsed from process.env on first use and kept: the bootstrap validates them
 * before Nest starts (a bad setting is one clear message), and ENVIRONMENT then hands out the same
 * object instead of parsing everything again.
 */
export function processEnvironment(): Environment {
  processSettings ??= loadEnvironment();
  return processSettings;
}

/** Makes the validated Environment injectable as `@Inject(ENVIRONMENT)`, and the SecretBox built from its keys. */
@Global()
@Module({
  providers: [
    { provide: ENVIRONMENT, useFactory: processEnvironment },
    { provide: SecretBox, useFactory: (environment: Environment) => new SecretBox(environment.secrets), inject: [ENVIRONMENT] },
  ],
  exports: [ENVIRONMENT, SecretBox],
})
export class RuntimeConfigModule {}
