import express, { type RequestHandler } from 'express';
import type { AddressInfo } from 'node:net';
import { helmetHeaders, securityHeaders } from './security-headers';

/** Every header of an answer from an Express app whose only middleware is `headers`, X-Powered-By included. */
async function answerHeaders(headers: RequestHandler): Promise<Record<string, string>> {
  const app = express();
  app.use(headers);
  app.get('/', (_request, response) => void response.type('text/plain').send('ok'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const kept: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (name !== 'date' && name !== 'connection' && name !== 'keep-alive') kept[name] = value;
    });
    return kept;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('securityHeaders', () => {
  it('writes exactly the headers helmet writes, X-Powered-By removed, on every request', async () => {
    const helmets = await answerHeaders(helmetHeaders());
    const middleware = securityHeaders();
    const first = await answerHeaders(middleware);
    const second = await answerHeaders(middleware);
    expect(first).toEqual(helmets);
    expect(second).toEqual(helmets);
    expect(first['x-powered-by']).toBeUndefined();
    expect(first['content-security-policy']).toBe(
      "default-src 'self';script-src 'self';script-src-attr 'none';style-src 'self';img-src 'self' data:;font-src 'self';connect-src 'self';object-src 'none';base-uri 'none';form-action 'self';frame-ancestors 'none'",
    );
    expect(first['x-frame-options']).toBe('DENY');
    expect(first['referrer-policy']).toBe('no-referrer');
  });

  it('keeps Express\'s X-Powered-By without it, so the removal above is the middleware\'s doing', async () => {
    expect((await answerHeaders((_request, _response, next) => next()))['x-powered-by']).toBe('Express');
  });
});
