import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import type { Figure, ScenarioResult } from '../scenarios/scenario';
import { costText } from '../support/cost-per-event';
import { speedMs, speedText } from '../support/machine-speed';

const number = (value: number, unit: string): string => {
  const digits = unit === 'ms' || unit === 'ratio' || unit === '%' || Math.abs(value) < 100 ? (unit === 'ratio' ? 2 : 1) : 0;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
};

export function formatValue(value: number | null, unit: string): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  return unit === 'ratio' ? number(value, unit) : `${number(value, unit)} ${unit}`;
}

/** Service figure ÷ reference figure: for rates above 1 is faster than the reference, for times above 1 is slower. */
export function ratioOf(figure: Figure): string {
  const reference = figure.reference?.value;
  if (!figure.reference || reference === null || reference === undefined || reference === 0 || figure.value === null) return '';
  return `${(figure.value / reference).toFixed(2)}×`;
}

/** `held`, `MISSED` or `not measured`: the pass line is the target as its text states it, nothing looser. */
export function verdict(figure: Figure): string {
  if (!figure.target) return '';
  const held = figure.target.holds === null ? 'not measured' : figure.target.holds ? 'held' : 'MISSED';
  return `${figure.target.text}: ${held}`;
}

/** How many targets of the run held, were missed, or were not measured. */
export function targetTally(results: ScenarioResult[]): string {
  const targets = results.flatMap((result) => result.figures.map((figure) => figure.target)).filter((target) => target !== undefined);
  const count = (holds: boolean | null) => targets.filter((target) => target.holds === holds).length;
  return `targets: ${count(true)} held, ${count(false)} missed, ${count(null)} not measured, of ${targets.length}`;
}

/** Lines for the terminal, as each scenario finishes. */
export function scenarioText(result: ScenarioResult, seconds: number): string {
  const lines = [`\n== ${result.name}: ${result.title}  (${seconds.toFixed(0)} s)`];
  for (const figure of result.figures) {
    const reference = figure.reference ? `  vs ${figure.reference.label} ${formatValue(figure.reference.value, figure.unit)} = ${ratioOf(figure)}` : '';
    const target = figure.target ? `  [target ${verdict(figure)}]` : '';
    lines.push(`  ${figure.label.padEnd(40)} ${formatValue(figure.value, figure.unit).padStart(16)}${reference}${target}`);
  }
  for (const { label, cost } of result.costs ?? []) lines.push(`  cost per event, ${label}: ${costText(cost)}`);
  for (const note of result.notes) lines.push(`  · ${note}`);
  return `${lines.join('\n')}\n`;
}

/** The whole run as a Markdown table, for BENCHMARKS.md. */
export function markdownTable(results: ScenarioResult[]): string {
  const rows = ['| scenario | figure | service | reference (same run) | ratio | target |', '|---|---|---|---|---|---|'];
  for (const result of results) {
    for (const figure of result.figures) {
      const reference = figure.reference ? `${figure.reference.label}: ${formatValue(figure.reference.value, figure.unit)}` : '';
      rows.push(`| ${result.name} | ${figure.label} | ${formatValue(figure.value, figure.unit)} | ${reference} | ${ratioOf(figure)} | ${verdict(figure)} |`);
    }
  }
  const costs = costTable(results);
  return `${rows.join('\n')}\n\n${targetTally(results)}\n${costs ? `\n${costs}` : ''}`;
}

const micro = (value: number): string => Math.round(value).toLocaleString('en-US');

/** CPU µs per event of every process, and PostgreSQL's work per event, one row per measured phase. */
export function costTable(results: ScenarioResult[]): string {
  const rows = results.flatMap((result) =>
    (result.costs ?? []).map(
      ({ label, cost }) =>
        `| ${result.name} | ${label} | ${cost.processes.map((entry) => `${entry.name} ${micro(entry.us)}`).join(' + ')} | ${micro(cost.postgresUs)} | ${micro(cost.redisUs)} | ${micro(cost.totalUs)} | ${cost.transactions.toFixed(2)} | ${cost.rowsWritten.toFixed(2)} | ${micro(cost.walBytes)} |`,
    ),
  );
  if (!rows.length) return '';
  const head = '| scenario | phase | app processes, CPU µs/event | PostgreSQL backends µs | Redis server µs | total µs | transactions | rows written | WAL bytes (cluster) |';
  return `${[head, '|---|---|---|---|---|---|---|---|---|', ...rows].join('\n')}\n`;
}

function shell(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 5_000 }).trim();
  } catch {
    return '?';
  }
}

/**
 * The machine, so a figure is never read without it: load average says whether other work ran, the
 * fixed workload's time how fast a core was for this process just then.
 */
export function machineText(): string {
  const model = /Model name:\s*(.+)/.exec(shell('lscpu', []))?.[1]?.trim() ?? cpus()[0]?.model ?? '?';
  const gib = (bytes: number) => (bytes / 1024 ** 3).toFixed(1);
  const load = loadavg().map((value) => value.toFixed(2)).join(' ');
  return `machine: nproc ${shell('nproc', [])}, ${model}, ${gib(totalmem())} GiB memory (${gib(freemem())} GiB free), Node ${process.version}, load average ${load}, ${speedText(speedMs())}`;
}
