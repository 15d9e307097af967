import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { LOAD_DELIVERIES, RECORD_OUTCOMES, recordOutcomesParams, runMigrations, seqRange, type Statement, STORE_EVENTS, storeEventsParams } from '@app/persistence/testing';
import { ERASED_SQL } from '../../apps/delivery-worker/src/delivery/erasure-check';
import { procRunMs } from '../support/proc-cpu';
import { walByTable } from '../support/wal-by-table';

/** The start-up option GenericPlanPool opens its connections with (one generic plan kept per prepared statement). */
const FORCE_GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

const USAGE = `node dist/bench/path-cost/event-path-cost.js [--server <postgres url>] [--group <n>] [--events <n>] [--wal-by-table]
       [--prepared] [--before <sql>]… [--floor] [--keep]
  The single-event path's statements (ingest's STORE_EVENTS, the worker's LOAD_DELIVERIES, erasure check and RECORD_OUTCOMES)
  on a fresh migrated database, one connection, --group events per statement, every event delivered.
  Prints per event: the backend's CPU, statements, WAL bytes (by table and index with --wal-by-table,
  read back with pg_walinspect), rows inserted and updated (HOT or not) per table.
  --prepared         each statement as its plan mode says, as the apps run them: named, and the
                     generic ones on a second connection that keeps one generic plan per statement,
                     as GenericPlanPool does
  --before <sql>     run on the fresh database first: what-ifs (drop or add an index, a trigger)
  --floor            then, on the same database and connection, what the store could cost at the least:
                     an empty round trip (SELECT 1) and the same rows (event key, event, primary delivery)
                     written by one plain named INSERT statement per group, with no look-up or decision
  WAL positions are the server's: on a shared server other sessions' writes count too.
`;

interface Phase {
  name: string;
  statements: number;
  cpuMs: number;
  walBytes: number;
  ranges: Array<[string, string]>;
}

function lsnBytes(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      server: { type: 'string', default: process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      group: { type: 'string', default: '20' },
      events: { type: 'string', default: '2000' },
      'wal-by-table': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      before: { type: 'string', multiple: true },
      prepared: { type: 'boolean', default: false },
      floor: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void process.stdout.write(USAGE);
  const group = Number(values.group);
  const total = Math.ceil(Number(values.events) / group) * group;
  const server = new URL(values.server);
  const database = new URL(values.server);
  database.pathname = `/event_path_cost_${Date.now().toString(36)}`;
  await runMigrations(database.toString());
  const client = new Client({ connectionString: database.toString() });
  await client.connect();
  const keptPlanClient = values.prepared ? new Client({ connectionString: database.toString(), options: FORCE_GENERIC_PLANS }) : client;
  if (keptPlanClient !== client) await keptPlanClient.connect();
  try {
    // What-if changes to the schema, e.g. --before 'DROP INDEX events_created_at_idx'.
    for (const sql of values.before ?? []) await client.query(sql);
    const [{ id: accountId }] = (
      await client.query<{ id: number }>(`INSERT INTO accounts (email, open_api_token) VALUES ('cost@example.com', 't') RETURNING id`)
    ).rows;
    await client.query(`INSERT INTO callback_settings (account_id, permissions) VALUES ($1, '{"customer_create": true}')`, [accountId]);
    await client.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, content_type, signing_secret)
       VALUES ('primary', $1, 'webhook', 'http://127.0.0.1:9/hook', 'http://127.0.0.1:9/hook', 'JSON', 's')`,
      [accountId],
    );
    // --prepared: each statement as the apps run it (statement.ts plan modes): named, so PostgreSQL
    // parses it once per connection, and the generic ones on a connection that keeps one plan each.
    const run = <P extends object, R extends object>(statement: Statement<P, R>, params: P) => {
      const on = values.prepared && statement.plan === 'generic' ? keptPlanClient : client;
      const named = values.prepared && statement.plan !== 'plain';
      return on.query<R>(named ? { name: statement.name, text: statement.text, values: statement.values(params) } : { text: statement.text, values: statement.values(params) });
    };
    const message = JSON.stringify(SAMPLE_MESSAGES.Customer_create);
    const pids = new Set<number>();
    for (const backend of [client, keptPlanClient]) pids.add((await backend.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    const backendsCpuMs = () => [...pids].reduce((sum, pid) => sum + (procRunMs(pid) ?? 0), 0);
    const tableStats = async () =>
      new Map(
        (
          await client.query<{ name: string; ins: string; upd: string; hot: string }>(
            `SELECT relname AS name, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables`,
          )
        ).rows.map((row) => [row.name, { ins: Number(row.ins), upd: Number(row.upd), hot: Number(row.hot) }]),
      );
    const phases = new Map<string, Phase>();
    const floors = new Map<string, Phase>();
    const measure = async <T>(name: string, statements: number, work: () => Promise<T>, into = phases): Promise<T> => {
      const phase = into.get(name) ?? { name, statements: 0, cpuMs: 0, walBytes: 0, ranges: [] };
      into.set(name, phase);
      const [{ lsn: start }] = (await client.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows;
      const cpuStart = backendsCpuMs();
      const result = await work();
      phase.cpuMs += backendsCpuMs() - cpuStart;
      const [{ lsn: end }] = (await client.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows;
      phase.statements += statements;
      phase.walBytes += Number(lsnBytes(end) - lsnBytes(start));
      phase.ranges.push([start, end]);
      return result;
    };

    // Unmeasured warm-up: plans cached, partitions' first pages in.
    const runGroup = async (round: number, measured: boolean) => {
      const ids = Array.from({ length: group }, (_, index) => `cost-${round}-${index}`);
      const store = () =>
        run(
          STORE_EVENTS,
          storeEventsParams(ids.map((eventId) => ({ eventId, accountId, action: 'Customer_create', messageText: message, permissionKey: 'customer_create', test: false, takers: [] }))),
        );
      const stored = measured ? await measure('ingest: store', 1, store) : await store();
      const seqs = stored.rows.filter((row) => row.kind === 'inserted').map((row) => row.seq as string);
      const [lowSeq, highSeq] = seqRange(seqs);
      const load = async () => {
        const loaded = await run(LOAD_DELIVERIES, { seqs, destinationIds: seqs.map(() => 'primary'), lowSeq, highSeq });
        await (values.prepared ? keptPlanClient : client).query(values.prepared ? { name: 'erased', text: ERASED_SQL, values: [seqs, lowSeq, highSeq] } : { text: ERASED_SQL, values: [seqs, lowSeq, highSeq] });
        return loaded.rows;
      };
      const loaded = measured ? await measure('worker: load + erasure check', 2, load) : await load();
      const now = new Date();
      const headers = { 'content-type': 'application/json', 'user-agent': 'event-callbacks/0.1.0', 'webhook-id': 'msg_x', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=' };
      const record = () =>
        run(
          RECORD_OUTCOMES,
          recordOutcomesParams(
            loaded.map((row) => ({
              seq: row.seq,
              destinationId: row.destination_id,
              accountId,
              series: row.series,
              seriesAttempts: row.series_attempts,
              createdAt: row.created_at,
              status: 'delivered' as const,
              nextAttemptAt: null,
              deliveredAt: now,
              lastError: null,
              open: { kind: 'unchanged' as const },
              attempt: {
                attempt: 1,
                startedAt: now,
                durationMs: 3,
                url: 'http://127.0.0.1:9/hook',
                requestHeaders: headers,
                encoding: 'json' as const,
                responseStatus: 200,
                responseHeaders: { 'content-length': '2', date: now.toUTCString() },
                responseBody: 'ok',
                error: null,
              },
            })),
          ),
        );
      if (measured) await measure('worker: record', 1, record);
      else await record();
    };
    for (let round = 0; round < 5; round += 1) await runGroup(-1 - round, false);
    await client.query('CHECKPOINT').catch(() => undefined);
    const statsStart = await tableStats();
    for (let round = 0; round < total / group; round += 1) await runGroup(round, true);
    if (values.floor) await measureFloors(client, accountId, message, group, total, (name, work) => measure(name, 1, work, floors));
    await new Promise((resolve) => setTimeout(resolve, 600));
    await client.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
    const statsEnd = await tableStats();
    const per = (value: number) => (value / total).toFixed(value / total < 10 ? 2 : 0);
    process.stdout.write(`${total} events, ${group} per statement, database ${database.pathname.slice(1)} on ${server.host}\n`);
    process.stdout.write('phase                          statements/event  backend CPU µs/event  WAL bytes/event\n');
    let sum = { statements: 0, cpu: 0, wal: 0 };
    for (const phase of phases.values()) {
      sum = { statements: sum.statements + phase.statements, cpu: sum.cpu + phase.cpuMs, wal: sum.wal + phase.walBytes };
      process.stdout.write(`${phase.name.padEnd(30)} ${per(phase.statements).padStart(16)}  ${per(phase.cpuMs * 1000).padStart(20)}  ${per(phase.walBytes).padStart(15)}\n`);
      const tables = values['wal-by-table'] ? await walByTable(database.toString(), phase.ranges, total) : [];
      for (const { table, bytes } of tables) if (bytes >= 10) process.stdout.write(`    ${table.padEnd(44)} ${bytes.toFixed(0).padStart(8)} B\n`);
    }
    process.stdout.write(`${'all'.padEnd(30)} ${per(sum.statements).padStart(16)}  ${per(sum.cpu * 1000).padStart(20)}  ${per(sum.wal).padStart(15)}\n`);
    for (const phase of floors.values()) {
      process.stdout.write(`${phase.name.padEnd(30)} ${per(phase.statements).padStart(16)}  ${per(phase.cpuMs * 1000).padStart(20)}  ${per(phase.walBytes).padStart(15)}\n`);
    }
    process.stdout.write('table rows per event: inserted, updated (of which HOT)\n');
    for (const [name, end] of statsEnd) {
      const start = statsStart.get(name) ?? { ins: 0, upd: 0, hot: 0 };
      if (end.ins === start.ins && end.upd === start.upd) continue;
      process.stdout.write(`    ${name.padEnd(30)} ins ${per(end.ins - start.ins)}  upd ${per(end.upd - start.upd)} (HOT ${per(end.hot - start.hot)})\n`);
    }
  } finally {
    if (keptPlanClient !== client) await keptPlanClient.end();
    await client.end();
    if (!values.keep) {
      const admin = new Client({ connectionString: server.toString() });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${database.pathname.slice(1)}" WITH (FORCE)`);
      await admin.end();
    }
  }
}

/**
 * --floor: what storing an event costs PostgreSQL with nothing but its rows, on the store's own
 * connection after it, one statement per group as the store's: an empty round trip, then the
 * rows STORE_EVENTS writes for a permitted event (its key, the event, the primary's delivery) by
 * one plain INSERT chain with no look-up, decision or answer beyond the seqs.
 */
async function measureFloors(
  client: Client,
  accountId: number,
  message: string,
  group: number,
  total: number,
  measure: (name: string, work: () => Promise<unknown>) => Promise<unknown>,
): Promise<void> {
  const plainStore = `
    WITH numbered AS (
      SELECT id, next_event_seq() AS seq FROM unnest($1::varchar[]) AS id
    ), keyed AS (
      INSERT INTO event_keys (event_id, account_id, event_seq) SELECT id, $2, seq FROM numbered
    ), stored AS (
      INSERT INTO events (seq, event_id, account_id, action, message, test, created_at)
      SELECT seq, id, $2, 'Customer_create', $3::json, false, now() FROM numbered
    ), queued AS (
      INSERT INTO deliveries (event_seq, destination_id, account_id, status, first_status, next_attempt_at)
      SELECT seq, 'primary', $2, 'queued', 'queued', now() FROM numbered
    )
    SELECT seq::text FROM numbered`;
  const ids = (round: number) => Array.from({ length: group }, (_, index) => `floor-${round}-${index}`);
  for (let round = 0; round < 5; round += 1) await client.query({ name: 'floor-store', text: plainStore, values: [ids(-1 - round), accountId, message] });
  for (let round = 0; round < total / group; round += 1) {
    await measure('floor: empty round trip', () => client.query({ name: 'floor-select', text: 'SELECT 1' }));
    await measure('floor: the store\'s rows, plain', () => client.query({ name: 'floor-store', text: plainStore, values: [ids(round), accountId, message] }));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`event-path-cost failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
