import 'reflect-metadata';
import { runMicroBenchmarks } from './micro.bench';
import { runPipelineBenchmark } from './pipeline.bench';

/**
 * `npm run bench`: every number is a ratio against a baseline measured in the same run on the same
 * machine, so results compare across machines; absolute rates are printed for context only.
 */
async function main(): Promise<void> {
  const format = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 0 });
  process.stdout.write('micro benchmarks (ratio = time per op ÷ baseline time per op)\n');
  for (const result of runMicroBenchmarks()) {
    process.stdout.write(
      `  ${result.name.padEnd(40)} ratio ${result.ratio.toFixed(2).padStart(7)}  (${format(result.candidateOpsPerSecond)} ops/s; baseline ${result.baseline}: ${format(result.baselineOpsPerSecond)} ops/s)\n`,
    );
  }
  if (process.argv.includes('--micro')) return;
  const total = Number(process.env.BENCH_EVENTS ?? 3000);
  process.stdout.write(`\npipeline benchmark (${total} events: ingest batch → PostgreSQL → BullMQ → worker → local receiver)\n`);
  const pipeline = await runPipelineBenchmark(total);
  process.stdout.write(
    `  delivery ratio ${pipeline.ratio.toFixed(2)}: ${format(pipeline.pipelineEventsPerSecond)} events/s delivered vs ${format(pipeline.directPostsPerSecond)} direct POSTs/s at the same concurrency (${pipeline.endpointConcurrency})\n` +
      `  ingest accepted ${format(pipeline.ingestAcceptedPerSecond)} events/s (batches of 500)\n`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
