import type { DynamicModule, Provider, Type } from '@nestjs/common';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';

/**
 * One dynamic module object per role, built on first use: Nest tells dynamic modules apart by reference,
 * so every module of an app that registers a role shares one queue (one connection) rather than opening its own.
 */
export function onePerRole<Role>(build: (role: Role) => DynamicModule): (role: Role) => DynamicModule {
  const registered = new Map<Role, DynamicModule>();
  return (role) => {
    let module = registered.get(role);
    if (!module) {
      module = build(role);
      registered.set(role, module);
    }
    return module;
  };
}

/** Provides the queue `open` makes, once its connection answered or start-up waited 3 s for it. */
export function queueProvider<Queue extends { ready(timeoutMs: number): Promise<boolean> }>(token: Type<Queue>, open: (environment: Environment) => Queue): Provider {
  return {
    provide: token,
    inject: [ENVIRONMENT],
    useFactory: async (environment: Environment): Promise<Queue> => {
      const queue = open(environment);
      await queue.ready(3000);
      return queue;
    },
  };
}
