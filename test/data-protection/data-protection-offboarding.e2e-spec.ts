import { DataSource } from 'typeorm';
import { countAcceptedEvents, FOLD_BOOKS } from '@app/persistence/testing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { adminCall } from '../support/admin-client';
import { useApps } from '../support/apps';
import { TaskWorkerModule } from '../support/task-worker';
import { expectTalliesToMatchEvents } from '../support/event-tallies';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { waitFor } from '@app/testing';
import { insertEvents, setPrimaryStatus } from '../support/worker-process';

/**
 * Offboarding (CONTRACT §12) on the one delivery model: the account's deliveries to every destination,
 * open rows and attempts go with its events, and the all-account tallies stay exact (no trigger counts a
 * deleted event out: the deletion books it). Own database, so the tallies hold exactly this file's events.
 * config-api records the deletion; a worker's task runners (without the delivery pipeline) delete the rows.
 */
const namespace = new IsolatedNamespace('data-protection-offboarding');
const { configApi } = useApps({ configApi: ConfigApiModule, tasks: TaskWorkerModule }, { namespace });

function database(): DataSource {
  return configApi.app.get(DataSource);
}

async function rowsOf(seqs: string[]): Promise<{ deliveries: number; open: number; attempts: number; events: number }> {
  const { rows } = await namespace.db.query<{ deliveries: number; open: number; attempts: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM deliveries WHERE event_seq = ANY($1::bigint[])) AS deliveries,
            (SELECT count(*)::int FROM open_deliveries WHERE event_seq = ANY($1::bigint[])) AS open,
            (SELECT count(*)::int FROM delivery_attempts WHERE event_seq = ANY($1::bigint[])) AS attempts,
            (SELECT count(*)::int FROM events WHERE seq = ANY($1::bigint[])) AS events`,
    [seqs],
  );
  return rows[0];
}

describe('DELETE /admin/v1/accounts/:id', () => {
  it("deletes every delivery, open row and attempt of the account's events and keeps the tallies exact", async () => {
    const leaving = await createAccount(configApi);
    const staying = await createAccount(configApi);
    // The staying account's events wait for a push URL's call (queued): nothing here delivers them.
    await setCallbackSettings(configApi.app, staying.id, { pushUrl: 'http://127.0.0.1:9/hook', permissions: 'all' });
    const gone = await insertEvents(configApi.app, leaving.id, [1, 2, 3, 4, 5].map((id) => ({ action: 'Customer_create', message: { id } })));
    const kept = await insertEvents(configApi.app, staying.id, [6, 7].map((id) => ({ action: 'Customer_create', message: { id } })));
    await setPrimaryStatus(configApi.app, [gone[0].seq, gone[1].seq, kept[0].seq], 'delivered');
    await setPrimaryStatus(configApi.app, [gone[2].seq], 'failed');
    // One event also goes to another destination, held by a pause, and was attempted there before.
    await namespace.db.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, paused, signing_secret)
       VALUES ('held', $1, 'webhook', 'http://127.0.0.1:9/held', 'http://127.0.0.1:9/held', 'JSON', true, 'whsec_test')`,
      [leaving.id],
    );
    await namespace.db.query(`INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts) VALUES ($1, 'held', $2, 'retrying', 1)`, [gone[3].seq, leaving.id]);
    await namespace.db.query(`INSERT INTO open_deliveries (event_seq, destination_id, account_id, held) VALUES ($1, 'held', $2, 'paused')`, [gone[3].seq, leaving.id]);
    await namespace.db.query(
      `INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding, response_status)
       SELECT seq, d, 0, 1, now(), 5, 'http://127.0.0.1:9/hook', '{}', 'json', 500 FROM unnest($1::bigint[]) AS seq, unnest(ARRAY['primary', 'held']) AS d`,
      [[gone[3].seq, kept[1].seq]],
    );
    await expectTalliesToMatchEvents(database());
    expect((await adminCall(configApi, 'GET', '/admin/v1/stats')).body.total).toBe(7);
    // Counted into the tallies from their rows first (the worker's fold): the deletion then books them out.
    const runner = database().createQueryRunner();
    try {
      expect((await countAcceptedEvents(runner)).counted).toBe(7);
    } finally {
      await runner.release();
    }
    await expectTalliesToMatchEvents(database());

    expect((await adminCall(configApi, 'DELETE', `/admin/v1/accounts/${leaving.id}`)).status).toBe(202);
    await waitFor('the deletion to finish', async () => {
      const { rows } = await namespace.db.query<{ status: string }>(`SELECT status FROM account_deletions WHERE id = $1`, [leaving.id]);
      return rows[0]?.status === 'done';
    });

    expect(await rowsOf(gone.map((event) => event.seq))).toEqual({ deliveries: 0, open: 0, attempts: 0, events: 0 });
    expect(await rowsOf(kept.map((event) => event.seq))).toEqual({ deliveries: 2, open: 0, attempts: 2, events: 2 });
    const { rows: destinations } = await namespace.db.query(`SELECT id FROM destinations WHERE account_id = $1`, [leaving.id]);
    expect(destinations).toEqual([]);
    await expectTalliesToMatchEvents(database());
    const stats = (await adminCall(configApi, 'GET', '/admin/v1/stats')).body;
    expect(stats).toMatchObject({ total: 2, counts: { delivered: 1, queued: 1, failed: 0 } });
    expect(stats.delivery_latency_ms.count).toBe(1);
    // Folded, the books say the same.
    await database().query(FOLD_BOOKS.text);
    await expectTalliesToMatchEvents(database());
    expect((await adminCall(configApi, 'GET', '/admin/v1/stats')).body).toEqual(stats);
  });

  it('deletes an account whose id was given again after an earlier offboarding (no 500), and the new one only', async () => {
    const id = 1_900_000_000 + Math.floor(Math.random() * 1_000_000);
    const deletionOf = async (): Promise<{ status: string; events_deleted: string } | undefined> =>
      (await namespace.db.query<{ status: string; events_deleted: string }>(`SELECT status, events_deleted FROM account_deletions WHERE id = $1`, [id])).rows[0];
    const offboard = async (): Promise<void> => {
      expect((await adminCall(configApi, 'DELETE', `/admin/v1/accounts/${id}`)).status).toBe(202);
      await waitFor('the deletion to finish', async () => (await deletionOf())?.status === 'done');
    };
    expect((await adminCall(configApi, 'POST', '/admin/v1/accounts', { email: `first-${id}@example.com`, id })).status).toBe(201);
    await insertEvents(configApi.app, id, [{ action: 'Customer_create', message: { id: 1 } }]);
    await offboard();
    expect(await deletionOf()).toEqual({ status: 'done', events_deleted: '1' });

    // The same id again (an operator's own ids), with events of its own: its deletion starts afresh.
    expect((await adminCall(configApi, 'POST', '/admin/v1/accounts', { email: `second-${id}@example.com`, id })).status).toBe(201);
    const again = await insertEvents(configApi.app, id, [1, 2].map((n) => ({ action: 'Customer_create', message: { id: n } })));
    await offboard();
    expect(await deletionOf()).toEqual({ status: 'done', events_deleted: '2' });
    expect(await rowsOf(again.map((event) => event.seq))).toEqual({ deliveries: 0, open: 0, attempts: 0, events: 0 });
    expect((await adminCall(configApi, 'GET', `/admin/v1/accounts/${id}`)).status).toBe(404);
  });
});
