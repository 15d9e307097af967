import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { adminCall } from '../support/admin-client';
import { useApps } from '../support/apps';
import { TaskWorkerModule } from '../support/task-worker';
import { expectTalliesToMatchEvents } from '../support/event-tallies';
import { createAccount } from '../support/fixtures';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { waitFor } from '@app/testing';
import { insertEvents } from '../support/worker-process';

/**
 * Events carry no foreign key to their account: an ingest statement that checked the account just before
 * it was marked deleted can still store an event of it. The account row (and with it the account's id
 * and email) goes only once ACCOUNT_DELETION_SETTLE has passed since the mark, and the deletion takes
 * such a late event first. The worker here waits an hour; the test moves the mark back instead of waiting.
 */
const namespace = new IsolatedNamespace('account-deletion-settle');
const { configApi } = useApps({ configApi: ConfigApiModule, tasks: [TaskWorkerModule, { ACCOUNT_DELETION_SETTLE: '1h' }] }, { namespace });

interface DeletionState {
  status: string;
  events_deleted: string;
  account_rows: number;
  events_left: number;
}

async function deletionOf(accountId: number): Promise<DeletionState> {
  const { rows } = await namespace.db.query<DeletionState>(
    `SELECT d.status, d.events_deleted, (SELECT count(*)::int FROM accounts WHERE id = $1) AS account_rows,
            (SELECT count(*)::int FROM events WHERE account_id = $1) AS events_left
       FROM account_deletions d WHERE d.id = $1`,
    [accountId],
  );
  return rows[0];
}

describe('account deletion and events stored late', () => {
  it('keeps the account row until the settle time has passed, and deletes an event stored after the mark before it goes', async () => {
    const leaving = await createAccount(configApi);
    await insertEvents(configApi.app, leaving.id, [1, 2, 3].map((id) => ({ action: 'Customer_create', message: { id } })));
    expect((await adminCall(configApi, 'DELETE', `/admin/v1/accounts/${leaving.id}`)).status).toBe(202);

    await waitFor('the events to be deleted', async () => (await deletionOf(leaving.id))?.events_deleted === '3');
    // A statement that saw the account live commits its event now, after the first walk of the events.
    await namespace.db.query(
      `WITH stored AS (
         INSERT INTO events (event_id, account_id, action, message) VALUES ('evt-late-settle', $1, 'Customer_create', '{"id": 4}') RETURNING seq, event_id
       ), keyed AS (
         INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, $1, seq FROM stored
       )
       INSERT INTO deliveries (event_seq, destination_id, account_id, status, first_status) SELECT seq, 'primary', $1, 'queued', 'queued' FROM stored`,
      [leaving.id],
    );
    await waitFor('the late event to be deleted', async () => (await deletionOf(leaving.id)).events_deleted === '4');
    expect(await deletionOf(leaving.id)).toEqual({ status: 'running', events_deleted: '4', account_rows: 1, events_left: 0 });

    // An hour later (the mark moved back), the account row goes.
    await namespace.db.query(`UPDATE accounts SET deleted_at = deleted_at - interval '2 hours' WHERE id = $1`, [leaving.id]);
    await waitFor('the deletion to finish', async () => (await deletionOf(leaving.id)).status === 'done');
    expect(await deletionOf(leaving.id)).toEqual({ status: 'done', events_deleted: '4', account_rows: 0, events_left: 0 });
    const { rows: keys } = await namespace.db.query(`SELECT event_id FROM event_keys WHERE account_id = $1`, [leaving.id]);
    expect(keys).toEqual([]);
    // None of them was counted into the tallies yet (no fold runs here): the deletion leaves the books as if they never came.
    await expectTalliesToMatchEvents(configApi.app.get(DataSource));
  });
});
