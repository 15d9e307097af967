import { type DrillResult, passed } from './drill';

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The block printed as soon as a drill ends. */
export function formatDrill(result: DrillResult): string {
  const lines = [`drill ${result.id}: ${result.title}`];
  const tally = result.tally;
  lines.push(
    tally
      ? `  accepted ${tally.accepted}, delivered ${tally.delivered}, failed ${tally.failed}, lost ${tally.lost}, ` +
          `duplicated ${tally.duplicated}, time ${seconds(result.durationMs)}`
      : `  accepted -, delivered -, lost -, duplicated -, time ${seconds(result.durationMs)}`,
  );
  for (const [reason, { count, examples }] of Object.entries(tally?.lostReasons ?? {})) {
    lines.push(`  LOST ${count}: ${reason} (e.g. ${examples.join(', ')})`);
  }
  for (const note of result.notes) lines.push(`  ${note}`);
  for (const problem of result.problems) lines.push(`  FAILED: ${problem.split('\n').join('\n    ')}`);
  lines.push(`  ${passed(result) ? 'PASS' : 'FAIL'}`);
  return lines.join('\n');
}

/** The summary table (the same shape as RESILIENCE.md's figures) and the closing count line. */
export function formatSummary(results: DrillResult[], machine: string): string {
  const rows = results.map((result) => {
    const tally = result.tally;
    const figures = tally ? [tally.accepted, tally.delivered, tally.failed, tally.lost, tally.duplicated] : ['-', '-', '-', '-', '-'];
    return `| ${result.id} | ${figures.join(' | ')} | ${seconds(result.durationMs)} | ${passed(result) ? 'pass' : 'FAIL'} |`;
  });
  const passedCount = results.filter(passed).length;
  return [
    `summary (${machine})`,
    '| drill | accepted | delivered | failed | lost | duplicated | time | result |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `${passedCount} passed, ${results.length - passedCount} failed`,
  ].join('\n');
}
