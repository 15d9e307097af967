import type { Client } from 'pg';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { RECORD_SQL } from '../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { STORE_SQL } from '../apps/ingest/src/events/event-store.service';
import { IngestModule } from '../apps/ingest/src/ingest.module';
import { type RunningApp, startApp } from './support/apps';
import { expectTalliesToMatchEvents } from './support/event-tallies';
import { INGEST_HEADERS } from './support/fixtures';
import { accountAnswering, useStatsApps } from './support/stats-accounts';
import { waitFor } from './support/wait-for';
import { deliveredRecordValues } from './support/worker-process';

/**
 * Ingest's store keeps the event books (status tallies, claimed ids) of the events it inserts inside
 * its own statement, and the insert triggers that keep them for every other writer stand aside for
 * that statement only. Own database: the tallies must equal exactly this file's events.
 */
const suite = useStatsApps('event-books');
const { namespace, receivers } = suite;
let ingest: RunningApp;

beforeAll(async () => {
  ingest = await startApp(IngestModule, namespace.overrides);
});

afterAll(async () => {
  await ingest?.close();
});

async function post(path: string, body: unknown): Promise<number> {
  const response = await fetch(`${ingest.url}${path}`, { method: 'POST', headers: INGEST_HEADERS, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

function customerCreate(accountId: number, eventId: string): Record<string, unknown> {
  return { account_id: accountId, action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create, event_id: eventId };
}

/** Calls of the two trigger functions in the current transaction (track_functions must be on). */
async function triggerCalls(db: Client): Promise<{ claims: number; tallies: number }> {
  const { rows } = await db.query<{ claims: number | null; tallies: number | null }>(
    `SELECT pg_stat_get_xact_function_calls('claim_event_keys'::regproc)::int AS claims,
            pg_stat_get_xact_function_calls('tally_event_changes'::regproc)::int AS tallies`,
  );
  return { claims: rows[0].claims ?? 0, tallies: rows[0].tallies ?? 0 };
}

describe('the event books kept by the statements that write events', () => {
  it('tallies and claims exactly what ingest stored, single events and batches, and what the worker then recorded', async () => {
    const good = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    const bad = await accountAnswering(suite.configApi, suite.worker, receivers, 500);
    const ids: string[] = [];
    for (const [index, account] of [good, bad, good].entries()) {
      ids.push(`books-single-${index}`);
      expect(await post('/v1/events', customerCreate(account, `books-single-${index}`))).toBe(202);
    }
    const batch = [good, bad, good, bad].map((account, index) => customerCreate(account, `books-batch-${index}`));
    ids.push(...batch.map((event) => String(event.event_id)));
    expect(await post('/v1/events/batch', { events: batch })).toBe(202);
    // The same ids again: duplicates, stored and tallied nowhere.
    expect(await post('/v1/events', customerCreate(good, 'books-single-0'))).toBe(200);

    await waitFor('every event to settle', async () => {
      const { rows } = await namespace.db.query<{ status: string }>(`SELECT status FROM events WHERE event_id = ANY($1::varchar[])`, [ids]);
      return rows.length === ids.length && rows.every((row) => row.status === 'delivered' || row.status === 'failed');
    });
    const { rows: keys } = await namespace.db.query<{ event_id: string; matches: boolean }>(
      `SELECT k.event_id, k.event_seq = e.seq AND k.account_id = e.account_id AS matches
         FROM event_keys k JOIN events e USING (event_id) WHERE k.event_id = ANY($1::varchar[])`,
      [ids],
    );
    expect(keys.filter((key) => key.matches).map((key) => key.event_id).sort()).toEqual([...ids].sort());
    // Counted twice if a trigger had also run for ingest's statements; not at all if they had not kept them.
    await expectTalliesToMatchEvents((sql) => namespace.db.query(sql).then((result) => result.rows));
    const { rows: statuses } = await namespace.db.query<{ status: string; events: number }>(
      `SELECT status, sum(events)::int AS events FROM event_tallies WHERE granularity = 'hour' GROUP BY status HAVING sum(events) <> 0 ORDER BY status`,
    );
    expect(statuses).toEqual([
      { status: 'delivered', events: 4 },
      { status: 'failed', events: 3 },
    ]);
  });

  it('has the insert triggers stand aside for ingest\'s statement only, and never beyond it', async () => {
    const db = namespace.db;
    const account = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    await db.query('BEGIN');
    try {
      await db.query(`SET LOCAL track_functions = 'pl'`);
      const stored = await db.query<{ kind: string; seq: string }>(STORE_SQL, [['books-kept'], [account], ['Customer_create'], ['{}']]);
      const seq = stored.rows.find((row) => row.kind === 'inserted')?.seq ?? '';
      expect(seq).not.toBe('');
      expect(await triggerCalls(db)).toEqual({ claims: 0, tallies: 0 });

      const recorded = await db.query(RECORD_SQL, deliveredRecordValues(seq));
      expect(recorded.rowCount).toBe(1);
      // The worker's record is tallied by the update trigger, in the same transaction.
      expect(await triggerCalls(db)).toEqual({ claims: 0, tallies: 1 });

      // The next statement of the same transaction writes no books of its own: the triggers keep them.
      await db.query(
        `INSERT INTO events (event_id, account_id, action, message, status, next_attempt_at) VALUES ('books-by-trigger', $1, 'Customer_create', '{}', 'queued', now())`,
        [account],
      );
      expect(await triggerCalls(db)).toEqual({ claims: 1, tallies: 2 });
      await db.query(`UPDATE events SET status = 'failed' WHERE event_id = 'books-by-trigger'`);
      expect(await triggerCalls(db)).toEqual({ claims: 1, tallies: 3 });
      // A plain insert reusing an id ingest claimed for another seq is still refused by the key trigger.
      await db.query('SAVEPOINT taken');
      await expect(
        db.query(
          `INSERT INTO events (event_id, account_id, action, message, status, next_attempt_at) VALUES ('books-kept', $1, 'Customer_create', '{}', 'queued', now())`,
          [account],
        ),
      ).rejects.toThrow('event_id books-kept is already taken');
      await db.query('ROLLBACK TO SAVEPOINT taken');
      await db.query('COMMIT');
    } catch (error) {
      await db.query('ROLLBACK');
      throw error;
    }
    await expectTalliesToMatchEvents((sql) => db.query(sql).then((result) => result.rows));
  });
});
