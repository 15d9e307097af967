import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadEnvironment } from '../config/environment';
import { loggerParams } from './logging';

type GenReqId = (request: IncomingMessage, response: ServerResponse) => unknown;

describe('request log ids', () => {
  it('come from one sequence for every request logger of the process', () => {
    // Nest's logger module and ingest's routes ahead of Express each build their own pino-http from these.
    const [nest, aheadOfExpress] = [loggerParams(loadEnvironment({})), loggerParams(loadEnvironment({}))].map(
      (params) => (params.pinoHttp as { genReqId: GenReqId }).genReqId,
    );
    const request = {} as IncomingMessage;
    const response = {} as ServerResponse;
    const ids = [nest(request, response), aheadOfExpress(request, response), nest(request, response), aheadOfExpress(request, response)];
    expect(new Set(ids).size).toBe(4);
    expect(ids).toEqual([...ids].sort((a, b) => Number(a) - Number(b)));
  });
});
