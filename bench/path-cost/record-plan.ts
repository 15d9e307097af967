import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { RECORD_SQL } from '../../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { defaultPartitionName, FINAL_STATUS_LIST, isPendingSql } from '@app/persistence';
import { procCpuMs } from '../support/proc-cpu';

const USAGE = `node dist/bench/path-cost/record-plan.js --database <name> [--server <postgres url>] [--rounds 2]
  What the worker's outcome statement (RECORD_SQL) costs at one event a statement when it names the
  partitioned table, as it does (PostgreSQL plans it for its values on every call, to prune partitions),
  against the same text naming the events' partition, planned as PostgreSQL chooses, and naming it with
  the pending guard in a form only the primary key serves under one generic plan. Run it on a
  database event-path-cost.js left with --keep; it sets every event back to queued before each round.
  Then the generic plans the partition's statements would keep, with the partition's statistics saying
  nothing is pending and then saying everything is: which index finds the batch's rows.
  A statement naming a partition does not fire the statement triggers of the partitioned table, so the
  partition's figures leave out the tally upsert the worker's record pays (events_tally_update).
`;

/** RECORD_SQL's 21 arrays for one delivered event. */
function oneEvent(seq: string, now: Date): unknown[] {
  return [[seq], [0], [1], [now], [3], ['http://127.0.0.1:9/hook'], ['{}'], ['data=x'], [200], ['{}'], ['ok'], [null], [seq], [0], [0], ['delivered'], [1], [null], [now], [null], [0]];
}

async function firstPartition(client: Client): Promise<string> {
  const found = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'events'::regclass AND c.relname <> $1 ORDER BY 1 LIMIT 1`,
    [defaultPartitionName('events')],
  );
  if (!found.rows[0]) throw new Error('no partition of events: run event-path-cost.js --keep first');
  return found.rows[0].name;
}

/** Backend CPU µs per statement over every event of the table, each its own statement. */
async function round(client: Client, backendPid: number, name: string, text: string, generic: boolean): Promise<{ us: number; applied: number; events: number }> {
  await client.query(`SET plan_cache_mode = ${generic ? 'force_generic_plan' : 'auto'}`);
  await client.query(`UPDATE events SET status = 'queued', attempts = 0, series_attempts = 0, delivered_at = NULL, next_attempt_at = now()`);
  const seqs = (await client.query<{ seq: string }>('SELECT seq::text AS seq FROM events ORDER BY seq')).rows.map((row) => row.seq);
  const now = new Date();
  const before = procCpuMs(backendPid) ?? 0;
  let applied = 0;
  for (const seq of seqs) applied += (await client.query({ name, text, values: oneEvent(seq, now) })).rows.length;
  return { us: (((procCpuMs(backendPid) ?? 0) - before) * 1000) / Math.max(1, seqs.length), applied, events: seqs.length };
}

/** The scans of the generic plan PostgreSQL would keep for `text`, under the partition's current statistics. */
async function genericScans(client: Client, text: string, partition: string): Promise<string[]> {
  await client.query(`ANALYZE ${partition}`);
  const seq = (await client.query<{ seq: string }>('SELECT seq::text AS seq FROM events LIMIT 1')).rows[0]?.seq ?? '0';
  await client.query('BEGIN');
  try {
    await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
    const plan = await client.query<{ 'QUERY PLAN': string }>({ text: `EXPLAIN (COSTS OFF) ${text}`, values: oneEvent(seq, new Date()) });
    return plan.rows.map((row) => row['QUERY PLAN'].trim()).filter((line) => / on events|Scan using|Index Scan on events|Bitmap Index Scan/.test(line));
  } finally {
    await client.query('ROLLBACK');
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      database: { type: 'string' },
      server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      rounds: { type: 'string', default: '2' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.database) return void process.stdout.write(USAGE);
  const url = new URL(values.server);
  url.pathname = `/${values.database}`;
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const partition = await firstPartition(client);
    const onPartition = RECORD_SQL.replace('UPDATE events e', `UPDATE ${partition} e`);
    // The same guard in a form the pending-due index's predicate does not follow from: the key is the only way in.
    // (PostgreSQL reads `NOT IN (list)` as `<> ALL (ARRAY[list])`.)
    const keyOnly = onPartition.replace(isPendingSql('e'), `e.status::text NOT IN ${FINAL_STATUS_LIST}`);
    if (keyOnly === onPartition) throw new Error('RECORD_SQL no longer holds the pending guard this probe rewrites');
    const variants: Array<[string, string, boolean]> = [
      ['partitioned table (as the worker runs it)', RECORD_SQL, false],
      [`partition ${partition}, plan chosen by PostgreSQL`, onPartition, false],
      [`partition ${partition}, guard only the key serves, one generic plan`, keyOnly, true],
      [`partition ${partition}, guard only the key serves, plan chosen by PostgreSQL`, keyOnly, false],
    ];
    for (let index = 1; index <= Number(values.rounds); index += 1) {
      for (const [position, [label, text, generic]] of variants.entries()) {
        const result = await round(client, backendPid, `record_${position}`, text, generic);
        process.stdout.write(`round ${index}, ${label}: ${result.events} events one a statement, ${result.applied} applied, backend CPU ${Math.round(result.us)} µs a statement\n`);
      }
    }
    await client.query('SET plan_cache_mode = auto');
    for (const [label, text] of [['as the worker writes the guard', onPartition], ['guard only the key serves', keyOnly]]) {
      await client.query(`UPDATE events SET status = 'delivered'`);
      process.stdout.write(`generic plan on the partition, ${label}, nothing pending in the statistics:\n  ${(await genericScans(client, text, partition)).join('\n  ')}\n`);
      await client.query(`UPDATE events SET status = 'queued', series_attempts = 0`);
      process.stdout.write(`generic plan on the partition, ${label}, everything pending in the statistics:\n  ${(await genericScans(client, text, partition)).join('\n  ')}\n`);
    }
  } finally {
    await client.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`record-plan failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
