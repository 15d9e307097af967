import { prettyLogLines } from './pretty-log-lines';

describe('prettyLogLines', () => {
  const format = prettyLogLines(false);

  it('turns a pino JSON line into one readable line', () => {
    const line = JSON.stringify({ level: 30, time: Date.UTC(2025, 0, 1, 12, 0, 0), pid: 7, hostname: 'h', context: 'Nest', msg: 'delivery worker ready', shards: 8 });
    const pretty = format(line);
    expect(pretty).toMatch(/INFO.*delivery worker ready/);
    expect(pretty).toContain('shards');
    expect(pretty).not.toContain('"level"');
    expect(pretty).not.toContain('\n');
  });

  it('passes anything else through unchanged', () => {
    for (const line of ['[start] all three apps are ready', '{not json', '{"no":"level"}', '']) expect(format(line)).toBe(line);
  });
});
