import { Global, Module } from '@nestjs/common';
import { type AppName, type Environment, loadEnvironment } from './environment';
import { SecretBox } from '../secrets/secret-box';
import { blockTargetRanges } from '../net/target-guard';
import { configureDns } from '../net/dns-resolution';

export const ENVIRONMENT = Symbol('ENVIRONMENT');

const BLOCKED_TARGET_RANGES_APPLIED = Symbol('BLOCKED_TARGET_RANGES_APPLIED');

let processSettings: Environment | undefined;

/**
 * This process's settings, parsed from process.env on first use and kept: the bootstrap validates them
 * before Nest starts (a bad setting is one clear message), and ENVIRONMENT then hands out the same
 * object instead of parsing everything again.
 */
export function processEnvironment(app?: AppName): Environment {
  processSettings ??= loadEnvironment(process.env, app);
  return processSettings;
}

/** Makes the validated Environment injectable as `@Inject(ENVIRONMENT)`, and the SecretBox built from its keys. */
@Global()
@Module({
  providers: [
    { provide: ENVIRONMENT, useFactory: () => processEnvironment() },
    { provide: SecretBox, useFactory: (environment: Environment) => new SecretBox(environment.secrets), inject: [ENVIRONMENT] },
    {
      // The target guard's DNS hook is process-wide; it takes this app's BLOCKED_TARGET_RANGES, DNS_SERVERS and DNS_TIMEOUT_MS as the app starts.
      provide: BLOCKED_TARGET_RANGES_APPLIED,
      useFactory: (environment: Environment) => {
        blockTargetRanges(environment.delivery.blockedTargetRanges);
        configureDns(environment.delivery.dns);
        return environment.delivery.blockedTargetRanges;
      },
      inject: [ENVIRONMENT],
    },
  ],
  exports: [ENVIRONMENT, SecretBox],
})
export class RuntimeConfigModule {}
