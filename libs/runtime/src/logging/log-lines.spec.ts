import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Every log call of the apps and libraries, read from the source: what it interpolates must not be a raw
 * error message (a driver's text quotes the values of the statement: emails, messages) nor a whole URL (a
 * push URL's path and query often carry the receiver's own secret). Errors go through loggableError or
 * loggableErrorText, URLs through loggableUrl (their origin).
 */
const ROOT = join(__dirname, '../../../..');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/\.(spec|fakes)\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** The text of each `logger.<level>(…)` call, to its closing parenthesis. */
function logCalls(source: string): string[] {
  const calls: string[] = [];
  for (const match of source.matchAll(/\blogger\.(?:fatal|error|warn|log|info|debug|trace|verbose)\(/gi)) {
    let depth = 0;
    let end = match.index + match[0].length - 1;
    for (; end < source.length; end += 1) {
      if (source[end] === '(') depth += 1;
      if (source[end] === ')' && (depth -= 1) === 0) break;
    }
    calls.push(source.slice(match.index, end + 1));
  }
  return calls;
}

const FORBIDDEN: [RegExp, string][] = [
  [/\.message\b/, 'a raw error message (use loggableErrorText)'],
  [/\berr:\s*\w/, 'a raw error object (use loggableError)'],
  [/\b(?:pushUrl|push_url|url|targetUrl)\b/i, 'a whole URL (use loggableUrl)'],
];

it('log calls interpolate no raw error message and no whole URL', () => {
  const problems: string[] = [];
  for (const file of [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs'))]) {
    for (const call of logCalls(readFileSync(file, 'utf8'))) {
      const judged = call.replace(/loggableUrl\([^)]*\)/g, '');
      for (const [pattern, what] of FORBIDDEN) if (pattern.test(judged)) problems.push(`${relative(ROOT, file)}: ${what}: ${call.slice(0, 160)}`);
    }
  }
  expect(problems).toEqual([]);
});
