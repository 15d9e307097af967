import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { DAY_MS, SEQ_COUNTER_BITS, utcDayStart } from '@app/persistence/testing';
import { waitFor } from '@app/testing';
import { BenchContext } from './support/bench-context';
import { ProcessSupervisor } from './support/process-supervisor';
import { latencyAtRate } from './scenarios/measure';
import { type LockWatch, watchErasureTransactions } from './support/erasure-lock-watch';

/**
 * `npm run bench:erasure`: erasure by subject (CONTRACT §12) on a large log, with the whole service
 * running. The bench's own database is filled by `scripts/seed-events.js` (ERASURE_SCALE_EVENTS, default
 * 10,000,000 over 10 days), then PROBES subjects of 1,000 events each are added, spread over those days.
 * Printed: the time to find a subject's 1,000 events (the erasure's own query, EXPLAIN ANALYZE, median
 * of 5), the time the real config-api takes to erase them (POST → GET says done), the longest
 * transaction of the erasure (every lock it takes is held at most that long; pg_stat_activity sampled
 * every few milliseconds), and delivery latency (POST sent → callback arrived) at 500 events/s before
 * and while erasures run one after another.
 */
const EVENTS = Number(process.env.ERASURE_SCALE_EVENTS ?? 10_000_000);
const DAYS = 10;
const SUBJECT_EVENTS = 1_000;
const LOAD_PER_SECOND = 500;
const LOAD_MS = Number(process.env.ERASURE_SCALE_LOAD_MS ?? 20_000);
/** Subjects erased while the load runs: more than the load's duration needs, so erasures never stop early. */
const PROBES = Number(process.env.ERASURE_SCALE_PROBES ?? 200);

const DIST = join(__dirname, '..');

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

const subjectOf = (runId: string, probe: number): string => `customer:erasure-probe-${runId}-${probe}`;

/**
 * PROBES subjects × 1,000 `Customer_update` events each, spread evenly over the seeded days, each with its
 * key, its primary delivery (delivered at the first attempt), that attempt and its book entry.
 */
async function addProbeSubjects(db: Client, runId: string, accountId: number): Promise<void> {
  const today = utcDayStart(Date.now());
  for (let probe = 0; probe < PROBES; probe += 1) {
    const id = `erasure-probe-${runId}-${probe}`;
    // seq: a day's start << 20 | (2^20 - 1 - n): above the seed's counters of that day, below the next day.
    await db.query(
      `WITH probe AS (
         SELECT ((($1::bigint - (1 + n % ${DAYS}) * ${DAY_MS}::bigint + 3600000 + $2::bigint) << ${SEQ_COUNTER_BITS}) | (1048575 - n / ${DAYS})) AS seq, n
           FROM generate_series(0, ${SUBJECT_EVENTS - 1}) AS n)
       , inserted AS (
         INSERT INTO events (seq, event_id, account_id, action, message, created_at)
         SELECT seq, $3 || '-' || n, $4, 'Customer_update', json_build_object('id', $3::text, 'cellphone', '1380000' || n), now()
           FROM probe
         RETURNING seq, event_id, account_id, created_at)
       , keys AS (INSERT INTO event_keys (event_id, account_id, event_seq) SELECT event_id, account_id, seq FROM inserted)
       , delivered AS (
         INSERT INTO deliveries (event_seq, destination_id, account_id, status, attempts, series, series_attempts, delivered_at, updated_at)
         SELECT seq, 'primary', account_id, 'delivered', 1, 0, 1, now(), now() FROM inserted)
       , booked AS (INSERT INTO book_entries (account_id, created_at, to_status, delivered_at) SELECT account_id, created_at, 'delivered', now() FROM inserted)
       INSERT INTO delivery_attempts (event_seq, destination_id, series, attempt, started_at, duration_ms, url, request_headers, encoding, response_status, response_body)
       SELECT seq, 'primary', 0, 1, now(), 20, 'https://receiver.example.com/hooks', '{}'::json, 'json', 200, 'ok'
         FROM inserted`,
      [today, probe, id, accountId],
    );
  }
  await db.query(`ANALYZE events`);
}

async function medianFindMs(db: Client, subject: string): Promise<{ ms: number; rows: number; usesIndex: boolean }> {
  const times: number[] = [];
  let rows = 0;
  let usesIndex = false;
  for (let run = 0; run < 5; run += 1) {
    const [plan] = (
      await db.query<{ 'QUERY PLAN': [{ 'Execution Time': number; Plan: unknown }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) SELECT seq FROM events WHERE callback_subject(action, message) = $1 AND seq <= $2::bigint ORDER BY seq`,
        [subject, (BigInt(Date.now()) << SEQ_COUNTER_BITS).toString()],
      )
    ).rows[0]['QUERY PLAN'];
    times.push(plan['Execution Time']);
    const text = JSON.stringify(plan.Plan);
    usesIndex = text.includes('events_subject_idx') || /events_p\d+_callback_subject/.test(text);
    rows = [...text.matchAll(/"Actual Rows":(\d+)/g)].map((match) => Number(match[1]))[0] ?? 0;
  }
  times.sort((a, b) => a - b);
  return { ms: times[2], rows, usesIndex };
}

async function erase(bench: BenchContext, subject: string): Promise<{ ms: number; erased: number }> {
  const headers = { authorization: `Bearer ${bench.environment.adminToken}`, 'content-type': 'application/json' };
  const started = performance.now();
  const answer = await fetch(`${bench.configApi.url}/admin/v1/erasures`, { method: 'POST', headers, body: JSON.stringify({ subject }) });
  if (answer.status !== 202) throw new Error(`POST /admin/v1/erasures answered ${answer.status}: ${await answer.text()}`);
  const { id } = (await answer.json()) as { id: string };
  const done = await waitFor(
    `erasure ${id} to finish`,
    async () => {
      const view = (await (await fetch(`${bench.configApi.url}/admin/v1/erasures/${id}`, { headers })).json()) as { status: string; events_erased: number };
      return view.status === 'done' ? view : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 10 },
  );
  return { ms: performance.now() - started, erased: done.events_erased };
}

function lockLine(watch: LockWatch): string {
  return `longest erasure transaction ${watch.longestMs.toFixed(1)} ms over ${watch.transactions} transaction(s) (sampled every ~${watch.sampleEveryMs.toFixed(1)} ms)`;
}

async function run(bench: BenchContext): Promise<void> {
  const { databaseUrl, runId } = bench.environment;
  say(`seeding ${EVENTS.toLocaleString('en-US')} events over ${DAYS} days`);
  const seedStarted = performance.now();
  await promisify(execFile)(process.execPath, [join(DIST, 'scripts', 'seed-events.js'), '--events', String(EVENTS), '--days', String(DAYS), '--database', databaseUrl], {
    timeout: 3_600_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    // The seed leaves its newest day's pending deliveries for the reconciler (open rows due); they would add
    // deliveries to the load. They end failed, their open rows closed and the change booked, as the recorder would.
    await db.query(
      `WITH pending AS (SELECT event_seq, destination_id, status FROM deliveries WHERE status IN ('queued', 'retrying'))
       , ended AS (
         UPDATE deliveries d SET status = 'failed', next_attempt_at = NULL, last_error = 'HTTP 503', updated_at = now()
           FROM pending p WHERE d.event_seq = p.event_seq AND d.destination_id = p.destination_id
         RETURNING d.event_seq, d.destination_id, d.account_id, p.status AS from_status)
       , closed AS (DELETE FROM open_deliveries o USING ended e WHERE o.event_seq = e.event_seq AND o.destination_id = e.destination_id)
       INSERT INTO book_entries (account_id, created_at, from_status, to_status, tallied)
       SELECT e.account_id, v.created_at, e.from_status, 'failed', e.destination_id = 'primary' FROM ended e JOIN events v ON v.seq = e.event_seq`,
    );
    say(`  seeded in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`);
    await addProbeSubjects(db, runId, bench.mainAccounts[0]);
    const [{ count }] = (await db.query<{ count: string }>(`SELECT count(*)::text AS count FROM events`)).rows;
    say(`events stored: ${Number(count).toLocaleString('en-US')}; ${PROBES} subjects of ${SUBJECT_EVENTS} events each among them`);

    const find = await medianFindMs(db, subjectOf(runId, 0));
    say(`find a subject's ${find.rows} events: ${find.ms.toFixed(1)} ms (median of 5, EXPLAIN ANALYZE; subject index used: ${find.usesIndex ? 'yes' : 'NO'})`);

    const calmWatch = await watchErasureTransactions(databaseUrl);
    const calm = await erase(bench, subjectOf(runId, 0));
    const calmLocks = await calmWatch.stop();
    say(`erase 1 subject, no load: ${calm.erased} events in ${calm.ms.toFixed(0)} ms; ${lockLine(calmLocks)}`);

    const before = await latencyAtRate(bench, bench.service(), 'erb', LOAD_PER_SECOND, LOAD_MS);
    say(`500/s, no erasure: p50 ${before.endToEndMs.p50.toFixed(1)} ms, p99 ${before.endToEndMs.p99.toFixed(1)} ms (${before.matched} callbacks)`);

    let erasing = true;
    let probe = 1;
    let subjectsErased = 0;
    let eventsErased = 0;
    const loadWatch = await watchErasureTransactions(databaseUrl);
    const erasures = (async () => {
      while (erasing && probe < PROBES) {
        const one = await erase(bench, subjectOf(runId, probe));
        probe += 1;
        subjectsErased += 1;
        eventsErased += one.erased;
      }
    })();
    const during = await latencyAtRate(bench, bench.service(), 'erd', LOAD_PER_SECOND, LOAD_MS).finally(() => {
      erasing = false;
    });
    await erasures;
    const loadLocks = await loadWatch.stop();
    say(`500/s, erasures running: p50 ${during.endToEndMs.p50.toFixed(1)} ms, p99 ${during.endToEndMs.p99.toFixed(1)} ms (${during.matched} callbacks); ` +
      `${subjectsErased} subjects (${eventsErased} events) erased meanwhile${probe >= PROBES ? ' — ran out of subjects: raise ERASURE_SCALE_PROBES' : ''}; ${lockLine(loadLocks)}`);
    say(`p99 during ÷ before: ${(during.endToEndMs.p99 / before.endToEndMs.p99).toFixed(2)}`);
  } finally {
    await db.end();
  }
}

async function main(): Promise<void> {
  const supervisor = new ProcessSupervisor();
  try {
    const bench = await BenchContext.start(supervisor, false, { env: {}, profileDir: null }, (line) => say(`  ${line}`));
    await run(bench);
  } finally {
    await supervisor.shutdown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:erasure failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
