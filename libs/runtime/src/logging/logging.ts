import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import type { IncomingMessage } from 'node:http';
import type { Environment } from '../config/environment';
import { counter } from '../metrics/metrics';

/** Answers by status class, for the 5xx alerts (deploy/prometheus/alerts.yml); health and metrics requests are not counted. */
const httpResponses = counter('http_server_responses_total', 'HTTP answers by status class (1xx to 5xx), health and metrics requests excluded', ['status_class']);

let lastRequestId = 0;

/** One id sequence for every request logger of the process: ingest's routes ahead of Express run a pino-http of their own. */
function nextRequestId(): number {
  lastRequestId = lastRequestId >= Number.MAX_SAFE_INTEGER ? 1 : lastRequestId + 1;
  return lastRequestId;
}

/**
 * Request logs carry the path only: the Open API's query holds the account e-mail and signature, and
 * bearer tokens live in headers, which are not logged at all.
 */
export function loggerParams(environment: Environment): Params {
  return {
    // Binding a request's logger keeps it in an AsyncLocalStorage, and on Node 20 the first such binding
    // turns on promise hooks for the rest of the process: every promise of every later delivery pays for
    // them (one-endpoint: 13 % more CPU per event). Health and metrics requests, which Prometheus and the
    // orchestrator make all day and which are never logged, bind nothing, so a process that serves only
    // those (the worker) never pays.
    exclude: [
      { path: 'health/*path', method: RequestMethod.ALL },
      { path: 'metrics', method: RequestMethod.ALL },
    ],
    pinoHttp: {
      level: environment.logLevel,
      genReqId: nextRequestId,
      // Called once per logged answer: the one place both Express and the routes ahead of it pass.
      customLogLevel: (_request, response) => {
        httpResponses.inc({ status_class: `${Math.floor(response.statusCode / 100)}xx` });
        return 'info';
      },
      autoLogging: {
        ignore: (request: IncomingMessage) => /^\/(health|metrics)/.test(request.url ?? ''),
      },
      serializers: {
        req: (request: { method?: string; url?: string; id?: unknown }) => ({
          id: request.id,
          method: request.method,
          path: (request.url ?? '').split('?')[0],
        }),
        res: (response: { statusCode?: number }) => ({ statusCode: response.statusCode }),
      },
      redact: { paths: ['*.authorization', '*.key', '*.signing_secret', '*.open_api_token', '*.secret'], censor: '[redacted]' },
    },
  };
}
