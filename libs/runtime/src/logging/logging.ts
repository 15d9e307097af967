import type { Params } from 'nestjs-pino';
import type { IncomingMessage } from 'node:http';
import type { Environment } from '../config/environment';

/**
 * Request logs carry the path only: the Open API's query holds the account e-mail and signature, and
 * bearer tokens live in headers, which are not logged at all.
 */
export function loggerParams(environment: Environment): Params {
  return {
    pinoHttp: {
      level: environment.logLevel,
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
