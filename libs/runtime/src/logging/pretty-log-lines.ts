import { prettyFactory } from 'pino-pretty';

/**
 * For `npm start` outside production: turns the apps' JSON log lines (pino) into readable ones. The
 * apps themselves always write JSON, so production, containers and log shippers see the same format;
 * only the local runner's terminal is prettified. Lines that are not pino JSON pass through as they are.
 */
export function prettyLogLines(colorize: boolean): (line: string) => string {
  const pretty = prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context,req.id',
    messageKey: 'msg',
    singleLine: true,
  });
  return (line) => {
    if (!line.startsWith('{')) return line;
    try {
      const record: unknown = JSON.parse(line);
      if (typeof record !== 'object' || record === null || !('level' in record)) return line;
      return pretty(record).replace(/\n$/, '');
    } catch {
      return line;
    }
  };
}
