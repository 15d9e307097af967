import type { LoggerService } from '@nestjs/common';
import { FrameworkLogger } from './framework-logger';

function recordingLogger(): { logger: LoggerService; lines: [string, unknown, unknown[]][] } {
  const lines: [string, unknown, unknown[]][] = [];
  const level =
    (name: string) =>
    (message: unknown, ...rest: unknown[]): void =>
      void lines.push([name, message, rest]);
  return { lines, logger: { log: level('info'), error: level('error'), warn: level('warn'), debug: level('debug'), verbose: level('trace') } };
}

describe('FrameworkLogger', () => {
  it("moves Nest's start-up lines (routes mapped, modules initialised) to debug and keeps their context", () => {
    const { logger, lines } = recordingLogger();
    const framework = new FrameworkLogger(logger);
    framework.log('Mapped {/health/live, GET} route', 'RouterExplorer');
    framework.log('AppModule dependencies initialized', 'InstanceLoader');
    framework.log('Starting Nest application...', 'NestFactory');
    expect(lines).toEqual([
      ['debug', 'Mapped {/health/live, GET} route', ['RouterExplorer']],
      ['debug', 'AppModule dependencies initialized', ['InstanceLoader']],
      ['debug', 'Starting Nest application...', ['NestFactory']],
    ]);
  });

  it("leaves the app's own lines and every warning or error where they were", () => {
    const { logger, lines } = recordingLogger();
    const framework = new FrameworkLogger(logger);
    framework.log('consuming deliveries from 8 queue shard(s)', 'DeliveryRunner');
    framework.log('config-api listening on http://127.0.0.1:3000');
    framework.warn('slow', 'RouterExplorer');
    framework.error('broken', 'stack', 'NestFactory');
    expect(lines.map(([name, message]) => [name, message])).toEqual([
      ['info', 'consuming deliveries from 8 queue shard(s)'],
      ['info', 'config-api listening on http://127.0.0.1:3000'],
      ['warn', 'slow'],
      ['error', 'broken'],
    ]);
  });
});
