import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { DELIVERY_ORDERINGS, MAX_PER_SECOND_MAX, MAX_PER_SECOND_MIN } from '@app/payloads';
import { REDIS } from '@app/runtime';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { adminCall, expectFieldError, expectQueryError, type Json } from '../support/admin-client';
import { startApp, useApps } from '../support/apps';
import { createAccount, type TestAccount } from '../support/fixtures';
import { signedOpenApiCall } from '../support/open-api-client';
import { primaryDestinationOf } from '../support/model-deliveries';
import { listenForSettingsChanges } from '../support/settings-changes';
import { waitFor } from '@app/testing';

const ORDERING_TEXT = 'ordering must be "none" or "subject"';
const PACE_TEXT = 'max_per_second must be an integer from 1 to 10000, or null for no limit';
const NOTHING_SENT_TEXT = 'param is missing or the value is empty: ordering or max_per_second';

describe('delivery options (CONTRACT §9)', () => {
  const { api } = useApps({ api: ConfigApiModule });

  const setOptions = (account: TestAccount, body: unknown): Promise<{ status: number; body: Json }> =>
    signedOpenApiCall(api, account, 'set_delivery_options', body);
  const pushSettings = async (account: TestAccount): Promise<Json> => {
    const answer = await signedOpenApiCall(api, account, 'push_settings');
    expect(answer.status).toBe(200);
    return answer.body;
  };
  /** The options as stored: on the account's primary destination (the push URL's endpoint), with its version. */
  const settingsRow = async (accountId: number): Promise<{ ordering: string; max_per_second: number | null; version: number } | undefined> => {
    const row = await primaryDestinationOf(api.app.get(DataSource), accountId);
    return row && { ordering: row.ordering, max_per_second: row.max_per_second, version: row.version };
  };

  describe('Open API set_delivery_options', () => {
    it('starts at the defaults, sets both options, and push_settings shows them', async () => {
      const account = await createAccount(api);
      expect(await pushSettings(account)).toMatchObject({ code: 1000, ordering: 'none', max_per_second: null });

      expect(await setOptions(account, { ordering: 'subject', max_per_second: 50 })).toEqual({
        status: 200,
        body: { code: 1000, message: 'OK', ordering: 'subject', max_per_second: 50 },
      });
      expect(await pushSettings(account)).toMatchObject({ ordering: 'subject', max_per_second: 50, push_url: null });
      expect(await settingsRow(account.id)).toMatchObject({ ordering: 'subject', max_per_second: 50 });
    });

    it('keeps the value of a field not sent, and null lifts the pace', async () => {
      const account = await createAccount(api);
      expect((await setOptions(account, { max_per_second: 7 })).body).toMatchObject({ ordering: 'none', max_per_second: 7 });
      expect((await setOptions(account, { ordering: 'subject' })).body).toMatchObject({ ordering: 'subject', max_per_second: 7 });
      expect((await setOptions(account, { max_per_second: 10000 })).body).toMatchObject({ ordering: 'subject', max_per_second: 10000 });
      expect((await setOptions(account, { max_per_second: null })).body).toMatchObject({ ordering: 'subject', max_per_second: null });
      expect((await setOptions(account, { ordering: 'none', max_per_second: 1 })).body).toMatchObject({ ordering: 'none', max_per_second: 1 });
      expect(await pushSettings(account)).toMatchObject({ ordering: 'none', max_per_second: 1 });
    });

    it('keeps both changes when two partial updates of different options race', async () => {
      const account = await createAccount(api);
      const answers = await Promise.all([setOptions(account, { ordering: 'subject' }), setOptions(account, { max_per_second: 33 })]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      expect(await pushSettings(account)).toMatchObject({ ordering: 'subject', max_per_second: 33 });
    });

    it.each([
      [{ ordering: 'SUBJECT' }, ORDERING_TEXT],
      [{ ordering: null }, ORDERING_TEXT],
      [{ ordering: 1 }, ORDERING_TEXT],
      [{ max_per_second: 0 }, PACE_TEXT],
      [{ max_per_second: 10001 }, PACE_TEXT],
      [{ max_per_second: -5 }, PACE_TEXT],
      [{ max_per_second: 2.5 }, PACE_TEXT],
      [{ max_per_second: '10' }, PACE_TEXT],
      [{ max_per_second: true }, PACE_TEXT],
      [{ ordering: 'subject', max_per_second: 0 }, PACE_TEXT],
      [{ ordering: 'fifo', max_per_second: 0 }, `${ORDERING_TEXT}; ${PACE_TEXT}`],
      [{ ordering: 'subject', max_per_sec: 5 }, 'max_per_sec is not a delivery option (ordering, max_per_second)'],
      [{}, NOTHING_SENT_TEXT],
      [[], NOTHING_SENT_TEXT],
      [['ordering', 'subject'], NOTHING_SENT_TEXT],
    ])('refuses %j with code 2000 naming the field, changing nothing', async (body, text) => {
      const account = await createAccount(api);
      expect((await setOptions(account, { ordering: 'subject', max_per_second: 9 })).status).toBe(200);
      const before = await settingsRow(account.id);
      expect(await setOptions(account, body)).toEqual({ status: 400, body: { code: 2000, message: 'Unknown error', exception: { message: text } } });
      expect(await settingsRow(account.id)).toEqual(before);
    });

    it('answers a body that is not JSON with 415 and changes nothing', async () => {
      const account = await createAccount(api);
      const answer = await signedOpenApiCall(api, account, 'set_delivery_options', 'ordering=subject', 'text/plain');
      expect(answer).toEqual({
        status: 415,
        body: { code: 2000, message: 'Unknown error', exception: { message: 'request body must be JSON (Content-Type: application/json), not text/plain' } },
      });
      expect(await pushSettings(account)).toMatchObject({ ordering: 'none', max_per_second: null });
    });

    it('is signed like every Open API call', async () => {
      const account = await createAccount(api);
      const answer = await signedOpenApiCall(api, { ...account, open_api_token: 'not-the-token' }, 'set_delivery_options', { ordering: 'subject' });
      expect(answer).toMatchObject({ status: 401, body: { code: 2059 } });
      expect(await pushSettings(account)).toMatchObject({ ordering: 'none' });
    });
  });

  describe('admin PUT /admin/v1/accounts/:id/delivery-options', () => {
    it('answers the account view with the options, which GET and the list show too', async () => {
      const account = await createAccount(api);
      const view = await adminCall(api, 'GET', `/admin/v1/accounts/${account.id}`);
      expect(view.body).toMatchObject({ id: account.id, ordering: 'none', max_per_second: null });

      const put = await adminCall(api, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { ordering: 'subject', max_per_second: 120 });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ id: account.id, email: account.email, ordering: 'subject', max_per_second: 120 });
      expect((await adminCall(api, 'GET', `/admin/v1/accounts/${account.id}`)).body).toEqual(put.body);
      const list = await adminCall(api, 'GET', `/admin/v1/accounts?search=${encodeURIComponent(account.email)}`);
      expect(list.body.items).toEqual([expect.objectContaining({ id: account.id, ordering: 'subject', max_per_second: 120 })]);

      // Partial: the pace alone; the Open API sees what the operator set.
      const partial = await adminCall(api, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { max_per_second: null });
      expect(partial.body).toMatchObject({ ordering: 'subject', max_per_second: null });
      expect(await pushSettings(account)).toMatchObject({ ordering: 'subject', max_per_second: null });
    });

    it('answers 422 naming each bad field and changes nothing', async () => {
      const account = await createAccount(api);
      const path = `/admin/v1/accounts/${account.id}/delivery-options`;
      await expectFieldError(api, 'PUT', path, 'ordering', { ordering: 'random' });
      await expectFieldError(api, 'PUT', path, 'max_per_second', { max_per_second: 0 });
      await expectFieldError(api, 'PUT', path, 'max_per_second', { max_per_second: 1.5 });
      await expectFieldError(api, 'PUT', path, 'max_per_second', { ordering: 'subject', max_per_second: '5' });
      await expectFieldError(api, 'PUT', path, 'max_per_sec', { max_per_sec: 5 });
      await expectFieldError(api, 'PUT', path, 'ordering', {});
      await expectFieldError(api, 'PUT', path, 'max_per_second', {});
      const both = await adminCall(api, 'PUT', path, { ordering: 1, max_per_second: 0 });
      expect(both).toEqual({
        status: 422,
        body: {
          error: 'validation_failed',
          message: `request body is invalid: ordering: must be "none" or "subject"; max_per_second: must be an integer from 1 to 10000, or null for no limit`,
          details: [
            { path: 'ordering', problem: 'must be "none" or "subject"' },
            { path: 'max_per_second', problem: 'must be an integer from 1 to 10000, or null for no limit' },
          ],
        },
      });
      expect(await settingsRow(account.id)).toMatchObject({ ordering: 'none', max_per_second: null, version: 0 });
    });

    it('answers 404 for an unknown account, 422 for a bad id, 400 for malformed JSON and 401 without the token', async () => {
      const unknown = await adminCall(api, 'PUT', '/admin/v1/accounts/2147483000/delivery-options', { ordering: 'subject' });
      expect(unknown).toEqual({ status: 404, body: { error: 'not_found', message: 'account 2147483000 does not exist' } });
      expect((await settingsRow(2147483000)) ?? null).toBeNull();
      await expectQueryError(api, 'PUT', '/admin/v1/accounts/abc/delivery-options', 'id', { ordering: 'subject' });

      const account = await createAccount(api);
      const malformed = await fetch(`${api.url}/admin/v1/accounts/${account.id}/delivery-options`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN ?? ''}`, 'content-type': 'application/json' },
        body: '{"ordering":',
      });
      expect(malformed.status).toBe(400);
      const anonymous = await fetch(`${api.url}/admin/v1/accounts/${account.id}/delivery-options`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ordering: 'subject' }),
      });
      expect(anonymous.status).toBe(401);
      expect(await settingsRow(account.id)).toMatchObject({ ordering: 'none', version: 0 });
    });

    it('stores the options without the account settings row (a missing one), with the defaults for what was not sent', async () => {
      const account = await createAccount(api);
      // The options live on the primary destination, which every account has from its creation; the
      // account's settings row (permissions, redaction) may be missing and is not needed for them.
      await api.app.get(DataSource).query('DELETE FROM callback_settings WHERE account_id = $1', [account.id]);
      const put = await adminCall(api, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { max_per_second: 3 });
      expect(put.body).toMatchObject({ ordering: 'none', max_per_second: 3 });
      expect(await settingsRow(account.id)).toEqual({ ordering: 'none', max_per_second: 3, version: 1 });
    });
  });

  it('bumps the settings version and tells the workers on every accepted change, and on no refused one', async () => {
    const account = await createAccount(api);
    const changes = await listenForSettingsChanges(api.environment);
    try {
      const mine = (): string[] => changes.of(account.id);

      expect((await setOptions(account, { ordering: 'subject' })).status).toBe(200);
      expect((await adminCall(api, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { max_per_second: 20 })).status).toBe(200);
      await waitFor('two settings-changed messages', () => mine().length >= 2);
      expect(await settingsRow(account.id)).toMatchObject({ version: 2 });

      expect((await setOptions(account, { max_per_second: 0 })).status).toBe(400);
      expect((await adminCall(api, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { ordering: 'x' })).status).toBe(422);
      // A third, accepted change marks the end: every message before it has arrived by then (one connection, in order).
      expect((await setOptions(account, { max_per_second: 21 })).status).toBe(200);
      await waitFor('the third settings-changed message', () => mine().length >= 3);
      expect(mine()).toHaveLength(3);
      expect(await settingsRow(account.id)).toMatchObject({ version: 3, ordering: 'subject', max_per_second: 21 });
    } finally {
      changes.close();
    }
  });

  it('stores and answers an operator change while Redis is down (workers then refresh on cache expiry)', async () => {
    const offline = await startApp(ConfigApiModule);
    const offlineRedis = offline.app.get<Redis>(REDIS);
    try {
      // This instance's Redis connection ends for good: the settings notice cannot be published.
      offlineRedis.disconnect();
      await waitFor('the Redis connection to end', () => offlineRedis.status === 'end');
      const account = await createAccount(api);
      const put = await adminCall(offline, 'PUT', `/admin/v1/accounts/${account.id}/delivery-options`, { ordering: 'subject', max_per_second: 8 });
      expect(put).toMatchObject({ status: 200, body: { id: account.id, ordering: 'subject', max_per_second: 8 } });
      expect(await settingsRow(account.id)).toEqual({ ordering: 'subject', max_per_second: 8, version: 1 });
    } finally {
      // Reconnected so the app shuts down along its normal path (an ended ioredis client leaves a handle open).
      await offlineRedis.connect();
      await offline.close();
    }
  });

  it("checks the same values as the database's CHECK constraints, so a value the API accepts is never a 500", async () => {
    // The options are columns of the destinations (the primary's row for the push URL).
    const rows: { name: string; definition: string }[] = await api.app.get(DataSource).query(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'destinations'::regclass AND conname IN ('destinations_ordering_check', 'destinations_max_per_second_check')
        ORDER BY conname`,
    );
    const quoted = (definition: string): string[] => [...definition.matchAll(/'([^']*)'/g)].map((match) => match[1]);
    expect(rows.map((row) => row.name)).toEqual(['destinations_max_per_second_check', 'destinations_ordering_check']);
    expect(quoted(rows[1].definition)).toEqual([...DELIVERY_ORDERINGS]);
    expect(rows[0].definition).toContain(`>= ${MAX_PER_SECOND_MIN}`);
    expect(rows[0].definition).toContain(`<= ${MAX_PER_SECOND_MAX}`);
  });

  it('documents both routes in /docs with the options, their bounds and their errors', async () => {
    const document = (await (await fetch(`${api.url}/docs/openapi.json`)).json()) as Json;
    const schemaOf = (ref: string): Json => document.components.schemas[ref.split('/').pop() as string];
    const open = document.paths['/open_api_v1/set_delivery_options'].post;
    const admin = document.paths['/admin/v1/accounts/{id}/delivery-options'].put;
    for (const operation of [open, admin]) {
      const body = schemaOf(operation.requestBody.content['application/json'].schema.$ref);
      expect(body.properties.ordering).toMatchObject({ enum: ['none', 'subject'] });
      expect(body.properties.max_per_second).toMatchObject({ type: ['integer', 'null'], minimum: 1, maximum: 10000 });
      expect(body.required ?? []).toEqual([]);
    }
    expect(Object.keys(open.responses).sort()).toEqual(['200', '400', '401', '413', '415', '429', '503']);
    expect(JSON.stringify(open.responses['400'])).toContain(PACE_TEXT);
    expect(Object.keys(admin.responses).sort()).toEqual(['200', '400', '401', '403', '404', '413', '422', '503']);
    const pushSettings = schemaOf(document.paths['/open_api_v1/push_settings'].get.responses['200'].content['application/json'].schema.$ref);
    expect(Object.keys(pushSettings.properties)).toEqual(expect.arrayContaining(['ordering', 'max_per_second']));
  });
});
