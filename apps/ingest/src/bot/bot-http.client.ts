import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ENVIRONMENT, type Environment, OutboundHttpClient } from '@app/runtime';
import { OriginLimiter } from './origin-limiter';

/**
 * Calls in flight per webhook origin (per ingest process). Also the keep-alive pool size per origin, so
 * admitted calls never queue inside the HTTP client behind a dead endpoint's sockets.
 */
export const BOT_MAX_IN_FLIGHT_PER_ORIGIN = 50;

export const BOT_HTTP_CLIENT = Symbol('BOT_HTTP_CLIENT');
export const BOT_ORIGIN_LIMITER = Symbol('BOT_ORIGIN_LIMITER');

/** The one outbound client for bot calls in this process: keep-alive pools per origin, private-address guard when configured. */
export const botHttpClientProvider: Provider = {
  provide: BOT_HTTP_CLIENT,
  inject: [ENVIRONMENT],
  useFactory: (environment: Environment) =>
    new OutboundHttpClient({
      allowPrivateTargets: environment.delivery.allowPrivateTargets,
      connectionsPerOrigin: BOT_MAX_IN_FLIGHT_PER_ORIGIN,
    }),
};

export const botOriginLimiterProvider: Provider = {
  provide: BOT_ORIGIN_LIMITER,
  useFactory: () => new OriginLimiter(BOT_MAX_IN_FLIGHT_PER_ORIGIN),
};

@Injectable()
export class BotHttpClientLifecycle implements OnApplicationShutdown {
  constructor(@Inject(BOT_HTTP_CLIENT) private readonly client: OutboundHttpClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
