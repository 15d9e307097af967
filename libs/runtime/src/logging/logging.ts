import { type Params, PinoLogger } from 'nestjs-pino';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { levels } from 'pino';
import { type HttpLogger, type Options as RequestLogOptions, pinoHttp } from 'pino-http';
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

/** The level of every request's line. */
const REQUEST_LINE_LEVEL = 'info';
/** Health checks and scrapes are neither logged nor counted. */
const UNLOGGED_PATHS = /^\/(health|metrics)/;

function countAnswer(response: ServerResponse): void {
  httpResponses.inc({ status_class: `${Math.floor(response.statusCode / 100)}xx` });
}

/** True when `LOG_LEVEL` lets request lines out (info, debug, trace). */
function writesRequestLines(environment: Environment): boolean {
  return (levels.values[environment.logLevel] ?? Infinity) <= levels.values[REQUEST_LINE_LEVEL];
}

/**
 * Request logs carry the path only: the Open API's query holds the account e-mail and signature, and
 * bearer tokens live in headers, which are not logged at all.
 */
function requestLogOptions(environment: Environment): RequestLogOptions<IncomingMessage, ServerResponse> {
  return {
    level: environment.logLevel,
    genReqId: nextRequestId,
    // Called once per logged answer: the one place every route passes.
    customLogLevel: (_request, response) => {
      countAnswer(response);
      return REQUEST_LINE_LEVEL;
    },
    autoLogging: {
      ignore: (request: IncomingMessage) => UNLOGGED_PATHS.test(request.url ?? ''),
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
  };
}

/**
 * The logger module's settings. Its own middleware runs for no route: it would bind each request's
 * logger in an AsyncLocalStorage, and on Node 20 the first such binding turns on promise hooks for the
 * rest of the process, so every later promise of every delivery and ingest pays for them (one-endpoint:
 * 13 % more CPU per event). Requests are logged by requestLog() instead, without a binding; the lines a
 * request's error writes name its id themselves (errorAnswer).
 */
export function loggerParams(environment: Environment): Params {
  return { forRoutes: [], pinoHttp: requestLogOptions(environment) };
}

let requestLogger: HttpLogger | undefined;

/**
 * What requestLog does when its lines would be dropped (LOG_LEVEL warn and above, as deployments that
 * keep request lines out of their logs run): the id and the count, without pino-http, whose child logger
 * per request (with its redaction), three listeners and line built for nobody cost ingest 14 µs a single
 * POST at 1,000/s (3 % of its CPU). The answer is counted when the response closes, which Node emits
 * once for every response, finished or cut off, as pino-http counts on the first of the two.
 */
function countAnswers(request: IncomingMessage & { id?: unknown }, response: ServerResponse, next?: () => void): void {
  request.id ??= nextRequestId();
  if (!UNLOGGED_PATHS.test(request.url ?? '')) response.once('close', () => countAnswer(response));
  next?.();
}

/**
 * Logs each request when its answer is sent and gives it its id (`request.id`), on the root logger of
 * the logger module. One per process, for Express's routes and for those served ahead of it; made at
 * the first request, when the logger module has set its root logger up.
 */
export function requestLog(environment: Environment): (request: IncomingMessage, response: ServerResponse, next?: () => void) => void {
  if (!writesRequestLines(environment)) return countAnswers;
  return (request, response, next) => {
    requestLogger ??= pinoHttp({ ...requestLogOptions(environment), logger: PinoLogger.root });
    requestLogger(request, response, next);
  };
}
