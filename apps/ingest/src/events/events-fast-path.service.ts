import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { ENVIRONMENT, type Environment, IngestTokenGuard, serveRoutesAheadOfExpress } from '@app/runtime';
import { EventsService, ingestStatus } from './events.service';

/**
 * POST /v1/events and /v1/events/batch served by a node:http listener in front of Express: the same
 * token check (IngestTokenGuard, made there for every /v1/ request before its body is read, whichever
 * way it is served), the same service, the same status codes as EventsController, without the
 * per-request cost of Express's router and Nest's pipeline (see serveRoutesAheadOfExpress).
 */
@Injectable()
export class EventsFastPath implements OnApplicationBootstrap {
  private readonly guard: IngestTokenGuard;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly events: EventsService,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {
    this.guard = new IngestTokenGuard(environment);
  }

  /** After init, so the Express app is the server's listener already; before listen, so no request misses it. */
  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server) return; // an application context without HTTP
    serveRoutesAheadOfExpress(
      server,
      [
        {
          path: '/v1/events',
          handle: async (body, request) => {
            const result = await this.events.ingestOne(body, request.headers);
            return { status: ingestStatus(result), body: result };
          },
        },
        {
          path: '/v1/events/batch',
          handle: async (body, request) => {
            return { status: 202, body: { results: await this.events.ingestBatchBody(body, request.headers) } };
          },
        },
      ],
      this.environment,
      // Every ingest route takes the ingest token: refused here, a request's body is never read or parsed.
      { pathPrefix: '/v1/', verify: (authorization) => this.guard.verify(authorization) },
    );
  }
}
