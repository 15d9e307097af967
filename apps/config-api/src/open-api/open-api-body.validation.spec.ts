import { OpenApiError } from '@app/runtime';
import { readPermissionChanges, readPushContentType, readPushUrl } from './open-api-body.validation';

async function problemOf(run: () => unknown): Promise<{ status: number; code: number; message: string } | null> {
  try {
    await run();
    return null;
  } catch (error) {
    if (!(error instanceof OpenApiError)) throw error;
    return { status: error.getStatus(), code: error.code, message: error.exceptionMessage };
  }
}

describe('readPushContentType', () => {
  it('accepts JSON and the form type in any case, stored canonically', () => {
    expect(readPushContentType({ push_content_type: 'json' })).toBe('JSON');
    expect(readPushContentType({ push_content_type: 'JSON' })).toBe('JSON');
    expect(readPushContentType({ push_content_type: 'Application/X-WWW-Form-Urlencoded' })).toBe('application/x-www-form-urlencoded');
  });

  it.each([[{}], [{ push_content_type: 'xml' }], [{ push_content_type: 1 }], [null], [['JSON']]])(
    'refuses %j with the seed text',
    async (body) => {
      expect(await problemOf(() => readPushContentType(body))).toEqual({
        status: 400,
        code: 2000,
        message: 'sorry you entered an incorrect value',
      });
    },
  );
});

describe('readPermissionChanges', () => {
  it('returns only the keys sent', () => {
    expect(readPermissionChanges({ permissions: { customer_create: true, agent_note_update: false } })).toEqual({
      customer_create: true,
      agent_note_update: false,
    });
  });

  it.each([[{}], [{ permissions: {} }], [{ permissions: [] }], [{ permissions: 'all' }], [{ permissions: null }]])(
    'refuses %j with the seed text',
    async (body) => {
      expect((await problemOf(() => readPermissionChanges(body)))?.message).toBe(
        'param is missing or the value is empty: permissions',
      );
    },
  );

  it('names unknown keys and non-boolean values', async () => {
    const problem = await problemOf(() =>
      readPermissionChanges({ permissions: { nope: true, customer_update: 'yes', customer_create: true } }),
    );
    expect(problem).toEqual({
      status: 400,
      code: 2000,
      message: 'unknown permission key: nope; permissions.customer_update must be true or false',
    });
  });

  it('does not accept __proto__ as a key', async () => {
    const body: unknown = JSON.parse('{"permissions":{"__proto__":true}}');
    expect((await problemOf(() => readPermissionChanges(body)))?.message).toBe('unknown permission key: __proto__');
  });
});

describe('readPushUrl', () => {
  it('returns the trimmed URL', async () => {
    expect(await readPushUrl({ push_url: ' https://example.com/hook ' }, true)).toBe('https://example.com/hook');
  });

  it.each([
    [{}, 'param is missing or the value is empty: push_url'],
    [{ push_url: '  ' }, 'param is missing or the value is empty: push_url'],
    [{ push_url: 42 }, 'push_url must be a string'],
    [{ push_url: 'ftp://example.com/x' }, 'push_url must use http or https'],
    [{ push_url: `https://example.com/${'a'.repeat(2048)}` }, 'push_url must be at most 2048 characters long'],
    [{ push_url: 'not a url' }, 'push_url is not a valid URL'],
  ])('refuses %j', async (body, message) => {
    expect(await problemOf(() => readPushUrl(body, true))).toEqual({ status: 400, code: 2000, message });
  });

  it('refuses private literal addresses unless allowed', async () => {
    expect((await problemOf(() => readPushUrl({ push_url: 'http://10.0.0.1/x' }, false)))?.message).toBe(
      'push_url points to a non-public address or to a host that does not resolve',
    );
    expect(await readPushUrl({ push_url: 'http://10.0.0.1/x' }, true)).toBe('http://10.0.0.1/x');
  });
});
