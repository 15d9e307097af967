import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import type { Figure, ScenarioResult } from '../scenarios/scenario';

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

function verdict(figure: Figure): string {
  if (!figure.target) return '';
  const holds = figure.target.holds === null ? 'not measured' : figure.target.holds ? 'holds' : 'MISSED';
  return `${figure.target.text}: ${holds}`;
}

/** Lines for the terminal, as each scenario finishes. */
export function scenarioText(result: ScenarioResult, seconds: number): string {
  const lines = [`\n== ${result.name}: ${result.title}  (${seconds.toFixed(0)} s)`];
  for (const figure of result.figures) {
    const reference = figure.reference ? `  vs ${figure.reference.label} ${formatValue(figure.reference.value, figure.unit)} = ${ratioOf(figure)}` : '';
    const target = figure.target ? `  [target ${verdict(figure)}]` : '';
    lines.push(`  ${figure.label.padEnd(40)} ${formatValue(figure.value, figure.unit).padStart(16)}${reference}${target}`);
  }
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
  return `${rows.join('\n')}\n`;
}

function shell(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 5_000 }).trim();
  } catch {
    return '?';
  }
}

/** The machine, so a figure is never read without it; load average says whether other work ran. */
export function machineText(): string {
  const model = /Model name:\s*(.+)/.exec(shell('lscpu', []))?.[1]?.trim() ?? cpus()[0]?.model ?? '?';
  const gib = (bytes: number) => (bytes / 1024 ** 3).toFixed(1);
  const load = loadavg().map((value) => value.toFixed(2)).join(' ');
  return `machine: nproc ${shell('nproc', [])}, ${model}, ${gib(totalmem())} GiB memory (${gib(freemem())} GiB free), Node ${process.version}, load average ${load}`;
}
