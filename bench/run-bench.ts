import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runMicroBenchmarks } from './micro.bench';
import { machineText, markdownTable, scenarioText } from './report/report';
import { requestedSoakMs } from './scenarios/memory.scenario';
import { SCENARIOS } from './scenarios/registry';
import type { ScenarioResult } from './scenarios/scenario';
import { BenchContext } from './support/bench-context';
import { STATS_FLUSH_MS } from './support/cost-per-event';
import { within } from '@app/runtime/async/within';
import { ProcessSupervisor } from './support/process-supervisor';
import { tableWritesText } from './support/table-writes';

const USAGE = `npm run bench -- [--quick] [--scenario <name>[,<name>…]] [--env KEY=VALUE]… [--profile <dir>] [--micro] [--out <file.md>] [--list]
  --quick        small sizes and short runs (about 2 minutes of load; reading PostgreSQL's counts adds 21 s per measured phase)
  --scenario     run only these (names from --list; "micro" is the in-process micro benchmarks)
  --env          a setting for every app the bench starts, e.g. --env WORKER_CONCURRENCY=100 (repeatable)
  --profile      ingest and worker write CPU profiles (.cpuprofile, for Chrome DevTools or speedscope) into this directory
  --micro        only the micro benchmarks
  --out          also write the Markdown table of the run to this file
`;

/** `KEY=VALUE` pairs from --env, refused by name when malformed. */
function settingsOf(pairs: string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of pairs) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!match) throw new Error(`--env ${pair}: expected KEY=VALUE with an upper-case KEY`);
    settings[match[1]] = match[2];
  }
  return settings;
}

const write = (text: string): void => void process.stdout.write(text);

function runMicro(quick: boolean): void {
  write('\n== micro: in-process, ratio = time per op ÷ baseline time per op\n');
  const format = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 0 });
  for (const result of quick ? runMicroBenchmarks(2, 150) : runMicroBenchmarks()) {
    write(`  ${result.name.padEnd(40)} ratio ${result.ratio.toFixed(2).padStart(7)}  (${format(result.candidateOpsPerSecond)} ops/s; baseline ${result.baseline}: ${format(result.baselineOpsPerSecond)} ops/s)\n`);
  }
}

/**
 * `npm run bench`: the built apps as production processes, a receiver, a load generator and the
 * framework-free baseline pipeline as processes of their own, every figure next to the baseline's.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      scenario: { type: 'string', multiple: true },
      micro: { type: 'boolean', default: false },
      out: { type: 'string' },
      env: { type: 'string', multiple: true },
      profile: { type: 'string' },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return write(USAGE), 0;
  if (values.list) {
    write(`micro  in-process micro benchmarks\n${SCENARIOS.map((scenario) => `${scenario.name.padEnd(18)} ${scenario.title}`).join('\n')}\n`);
    return 0;
  }
  const known = new Set(['micro', ...SCENARIOS.map((scenario) => scenario.name)]);
  const asked = values.micro ? ['micro'] : (values.scenario ?? []).flatMap((name) => name.split(',')).filter(Boolean);
  const unknown = asked.filter((name) => !known.has(name));
  if (unknown.length) {
    process.stderr.write(`unknown scenario ${unknown.join(', ')}; known: ${[...known].join(', ')}\n`);
    return 2;
  }
  const selected = asked.length ? new Set(asked) : known;
  const quick = values.quick;
  const stackOptions = { env: settingsOf(values.env ?? []), profileDir: values.profile ? resolve(values.profile) : null };
  if (stackOptions.profileDir) mkdirSync(stackOptions.profileDir, { recursive: true });
  const started = Date.now();
  const machineAtStart = machineText();
  write(`bench (${quick ? 'quick' : 'full'}), ${new Date().toISOString()}\n${machineAtStart}\n`);
  write('Figures measured while other work runs on the machine are not comparable with a calm run.\n');
  if (Object.keys(stackOptions.env).length) write(`app settings from --env: ${JSON.stringify(stackOptions.env)}\n`);
  if (selected.has('micro')) runMicro(quick);

  const scenarios = SCENARIOS.filter((scenario) => selected.has(scenario.name));
  const results: ScenarioResult[] = [];
  const failures: string[] = [];
  let tableWrites = '';
  if (scenarios.length) {
    const supervisor = new ProcessSupervisor();
    try {
      write('\nstarting the service, receiver, load generator…\n');
      const bench = await within(BenchContext.start(supervisor, quick, stackOptions, (line) => write(`  ${line}\n`)), 180_000, 'starting the bench');
      for (const scenario of scenarios) {
        const scenarioStarted = Date.now();
        try {
          // A BENCH_SOAK_MS soak (memory scenario) may be longer than a quick scenario's limit; each measured
          // phase also waits twice for PostgreSQL's counts (STATS_FLUSH_MS), eight phases in load-steps.
          const limitMs = (quick ? 180_000 : 45 * 60_000) + (requestedSoakMs() ?? 0) + 16 * STATS_FLUSH_MS;
          const result = await within(scenario.run(bench), limitMs, `scenario ${scenario.name}`);
          results.push(result);
          write(scenarioText(result, (Date.now() - scenarioStarted) / 1000));
        } catch (error) {
          failures.push(scenario.name);
          write(`\n== ${scenario.name}: FAILED after ${((Date.now() - scenarioStarted) / 1000).toFixed(0)} s: ${error instanceof Error ? error.message : String(error)}\n`);
        }
      }
      tableWrites = await tableWritesText(bench.environment.databaseUrl).catch((error: unknown) => `table writes not read: ${String(error)}\n`);
      write(`\n${tableWrites}`);
    } finally {
      write('\nstopping every process and removing the bench database and Redis keys…\n');
      await supervisor.shutdown();
    }
  }
  if (results.length) {
    const table = markdownTable(results);
    write(`\n${table}`);
    if (values.out) writeFileSync(values.out, `${quick ? 'quick' : 'full'} run of ${new Date(started).toISOString()}, ${((Date.now() - started) / 60_000).toFixed(0)} min\nat the start: ${machineAtStart}\nat the end: ${machineText()}\n\n${table}\n${tableWrites}`);
  }
  write(`\ndone in ${((Date.now() - started) / 1000).toFixed(0)} s; ${machineText()}\n`);
  if (failures.length) write(`failed: ${failures.join(', ')}\n`);
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
