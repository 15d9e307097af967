import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { register } from 'prom-client';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { startDefaultMetrics } from './metrics';

/**
 * With METRICS_PORT set, `/metrics` is served on that port by a plain node:http server of its own (and
 * answers 404 on the public port): the port a load balancer publishes then carries no metrics, and a
 * NetworkPolicy can open the metrics port to the monitoring namespace alone.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server: Server | null = null;

  constructor(@Inject(ENVIRONMENT) private readonly environment: Environment) {}

  /** The port it listens on (the one picked when METRICS_PORT is 0), or null when metrics share the public port. */
  get port(): number | null {
    return this.server ? (this.server.address() as AddressInfo).port : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    const port = this.environment.metricsPort;
    if (port === null) return;
    startDefaultMetrics();
    const server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method !== 'GET' || path !== '/metrics') {
        response.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'not_found', message: 'only GET /metrics is served here' }));
        return;
      }
      register.metrics().then(
        (text) => response.writeHead(200, { 'Content-Type': register.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.environment.listenHost ?? undefined, () => resolve());
    });
    this.server = server;
    this.logger.log(`metrics on port ${this.port ?? port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
