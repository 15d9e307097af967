import { Logger } from '@nestjs/common';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ApiError } from './api-error';
import { errorAnswer, knownErrorStatus } from './error.filter';
import { DOMAIN_ERROR_STATUS, DomainError, type DomainErrorCode } from '../errors/domain-error';

const root = join(__dirname, '../../../..');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Where an HTTP error may be built: the HTTP layer itself (controllers, guards, interceptors, the shared http folder, the Open API's error vocabulary). */
const HTTP_LAYER = /(\.controller|\.guard|\.interceptor)\.ts$|^libs\/runtime\/src\/http\/|^apps\/config-api\/src\/open-api\/open-api-errors\.ts$|^apps\/console\//;

describe('DomainError', () => {
  it('is answered with the status its code names and the same body an ApiError of that status had', () => {
    for (const [code, status] of Object.entries(DOMAIN_ERROR_STATUS) as [DomainErrorCode, number][]) {
      const details = [{ path: 'message.id', problem: 'must be a string' }];
      const answer = errorAnswer(new DomainError(code, `the ${code} text`, details), '/admin/v1/accounts');
      expect(answer).toEqual(errorAnswer(new ApiError(status, code, `the ${code} text`, details), '/admin/v1/accounts'));
      expect(answer).toEqual({ status, body: { error: code, message: `the ${code} text`, details } });
      expect(knownErrorStatus(new DomainError(code, 'x'))).toBe(status);
    }
  });

  it('keeps the {error, message} body on Open API paths too, as the services’ errors always had', () => {
    expect(errorAnswer(new DomainError('not_found', 'account 7 does not exist'), '/open_api_v1/destinations')).toEqual({
      status: 404,
      body: { error: 'not_found', message: 'account 7 does not exist' },
    });
  });

  it('leaves an unknown error to the filter’s 500', () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    expect(knownErrorStatus(new Error('boom'))).toBeNull();
    expect(errorAnswer(new Error('boom'), '/admin/v1/accounts').status).toBe(500);
  });

  it('is the only error stores and services throw: the HTTP error types stay in the HTTP layer', () => {
    const offenders = ['apps', 'libs']
      .flatMap((folder) => sourceFiles(join(root, folder)))
      .map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }))
      .filter(({ path, text }) => !HTTP_LAYER.test(path) && /new (ApiError|OpenApiError|\w+Exception)\(/.test(text))
      .map(({ path }) => path);
    expect(offenders).toEqual([]);
  });
});
