import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { RECORD_SQL } from '../../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { LOAD_SQL } from '../../apps/delivery-worker/src/delivery/loading/event-loader';
import { ERASED_SQL } from '../../apps/delivery-worker/src/delivery/erasure-check';
import { defaultPartitionName, isNotFinalSql, isPendingSql, keptPlanLines } from '@app/persistence';
import { procRunMs } from '../support/proc-cpu';

const USAGE = `node dist/bench/path-cost/record-plan.js --database <name> [--server <postgres url>] [--rounds 2]
  What the worker's outcome statement (RECORD_SQL) costs the PostgreSQL backend at one event a
  statement: as the worker ran it before (pending guard, pruned by the array of seqs, so planned for
  its values on every call), as it runs it now (key-only guard, the batch's seq bounds as scalars, one
  generic plan kept on the connection, GenericPlanPool) and the same text with the plan left to
  PostgreSQL. Run it on a database event-path-cost.js left with --keep; it sets every event back to
  queued before each round. Then the generic plans of the statement now and of the old guard under
  bounds, with the partition's statistics saying nothing is pending and then that everything is:
  which index finds the batch's rows, and how many partitions the executor drops before reading.
  Before the record, the worker's load and erasure check the same way: unnamed and planned per call
  without bounds, as before, against their kept plans with bounds.
`;

const BOUNDS = ' AND e.seq BETWEEN $2::bigint AND $3::bigint';
const READS: Array<[string, string, string]> = [
  ['load', LOAD_SQL.replace(BOUNDS, ''), LOAD_SQL],
  ['erasure check', ERASED_SQL.replace(BOUNDS.replaceAll('e.', ''), ''), ERASED_SQL],
];

/** The statement before the kept plan: the pending guard, no scalar bounds. */
const RECORD_BEFORE_SQL = RECORD_SQL.replace(' AND e.seq BETWEEN $22::bigint AND $23::bigint', '').replace(isNotFinalSql('e'), isPendingSql('e'));
/** Today's statement with the old guard: what a kept plan of it reads when the statistics say little is pending. */
const RECORD_PENDING_GUARD_SQL = RECORD_SQL.replace(isNotFinalSql('e'), isPendingSql('e'));

/** RECORD_SQL's arrays for one delivered event, and its seq bounds when the statement takes them. */
function oneEvent(seq: string, now: Date, bounds: boolean): unknown[] {
  const values = [[seq], [0], [1], [now], [3], ['http://127.0.0.1:9/hook'], ['{}'], ['data=x'], [200], ['{}'], ['ok'], [null], [seq], [0], [0], ['delivered'], [1], [null], [now], [null], [0]];
  return bounds ? [...values, seq, seq] : values;
}

async function eventsPartition(client: Client): Promise<string> {
  const found = await client.query<{ name: string }>(`SELECT tableoid::regclass::text AS name FROM events WHERE tableoid <> $1::regclass LIMIT 1`, [
    defaultPartitionName('events'),
  ]);
  if (!found.rows[0]) throw new Error('no events in a daily partition: run event-path-cost.js --keep first');
  return found.rows[0].name;
}

/** Backend CPU µs per statement over every event of the table, each its own statement. */
async function round(client: Client, backendPid: number, name: string, text: string, generic: boolean): Promise<{ us: number; applied: number; events: number }> {
  await client.query(`SET plan_cache_mode = ${generic ? 'force_generic_plan' : 'auto'}`);
  await client.query(`UPDATE events SET status = 'queued', attempts = 0, series_attempts = 0, delivered_at = NULL, next_attempt_at = now()`);
  const seqs = (await client.query<{ seq: string }>('SELECT seq::text AS seq FROM events ORDER BY seq')).rows.map((row) => row.seq);
  const now = new Date();
  const before = procRunMs(backendPid) ?? 0;
  let applied = 0;
  for (const seq of seqs) applied += (await client.query({ name, text, values: oneEvent(seq, now, text !== RECORD_BEFORE_SQL) })).rows.length;
  return { us: (((procRunMs(backendPid) ?? 0) - before) * 1000) / Math.max(1, seqs.length), applied, events: seqs.length };
}

/**
 * Backend CPU µs per statement of a read of one event, over every event: unnamed and planned per call
 * (`keptAs` null), or prepared as `keptAs` under a kept plan with the seq bounds.
 */
async function readRound(client: Client, backendPid: number, text: string, keptAs: string | null): Promise<number> {
  await client.query(`SET plan_cache_mode = ${keptAs ? 'force_generic_plan' : 'auto'}`);
  const seqs = (await client.query<{ seq: string }>('SELECT seq::text AS seq FROM events ORDER BY seq')).rows.map((row) => row.seq);
  const before = procRunMs(backendPid) ?? 0;
  for (const seq of seqs) await client.query(keptAs ? { name: keptAs, text, values: [[seq], seq, seq] } : { text, values: [[seq]] });
  return (((procRunMs(backendPid) ?? 0) - before) * 1000) / Math.max(1, seqs.length);
}

/** The scans of the generic plan kept for `text` under the partition's current statistics, and the partitions dropped at start. */
async function genericScans(client: Client, text: string, partition: string): Promise<string[]> {
  await client.query(`ANALYZE ${partition}`);
  const seq = (await client.query<{ seq: string }>('SELECT seq::text AS seq FROM events LIMIT 1')).rows[0]?.seq ?? '0';
  const lines = await keptPlanLines(async (sql) => (await client.query<{ 'QUERY PLAN': string }>(sql)).rows, text, oneEvent(seq, new Date(), true));
  return lines.filter((line) => /Scan using .* on events|Scan on events|Subplans Removed/.test(line));
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
    const partition = await eventsPartition(client);
    if (RECORD_BEFORE_SQL === RECORD_SQL || RECORD_PENDING_GUARD_SQL === RECORD_SQL) throw new Error('RECORD_SQL no longer has the guard and bounds this probe rewrites');
    for (const [label, before, now] of READS) {
      if (before === now) throw new Error(`the worker's ${label} no longer has the bounds this probe takes off`);
      for (let index = 1; index <= Number(values.rounds); index += 1) {
        const [planned, kept] = [await readRound(client, backendPid, before, null), await readRound(client, backendPid, now, `kept_${label.replaceAll(' ', '_')}`)];
        process.stdout.write(`round ${index}, ${label}, one event a statement: before (planned per call) ${Math.round(planned)} µs, now (kept plan, bounds) ${Math.round(kept)} µs a statement\n`);
      }
    }
    const variants: Array<[string, string, boolean]> = [
      ['before: pending guard, pruned by the array, planned per call', RECORD_BEFORE_SQL, false],
      ['now: key-only guard, seq bounds, one generic plan kept (as the worker runs it)', RECORD_SQL, true],
      ['now\'s text, plan chosen by PostgreSQL', RECORD_SQL, false],
    ];
    for (let index = 1; index <= Number(values.rounds); index += 1) {
      for (const [position, [label, text, generic]] of variants.entries()) {
        const result = await round(client, backendPid, `record_${position}`, text, generic);
        process.stdout.write(`round ${index}, ${label}: ${result.events} events one a statement, ${result.applied} applied, backend CPU ${Math.round(result.us)} µs a statement\n`);
      }
    }
    await client.query('SET plan_cache_mode = auto');
    for (const [label, text] of [['now', RECORD_SQL], ['the old pending guard under bounds', RECORD_PENDING_GUARD_SQL]]) {
      await client.query(`UPDATE events SET status = 'delivered'`);
      process.stdout.write(`generic plan, ${label}, nothing pending in the statistics of ${partition}:\n  ${(await genericScans(client, text, partition)).join('\n  ')}\n`);
      await client.query(`UPDATE events SET status = 'queued', series_attempts = 0`);
      process.stdout.write(`generic plan, ${label}, everything pending in the statistics of ${partition}:\n  ${(await genericScans(client, text, partition)).join('\n  ')}\n`);
    }
  } finally {
    await client.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`record-plan failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
