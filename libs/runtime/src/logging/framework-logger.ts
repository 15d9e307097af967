import type { LoggerService, LogLevel } from '@nestjs/common';

/**
 * Nest's own start-up lines: the factory's and application's, one per module initialised and one per
 * route mapped (about 130 for config-api). They say nothing an operator acts on, so they go out at
 * debug and a start prints the app's own lines (`LOG_LEVEL=debug` shows them again).
 */
const FRAMEWORK_CONTEXTS: ReadonlySet<string> = new Set(['NestFactory', 'NestApplication', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** The app's logger as Nest's: every line passes unchanged except Nest's start-up lines, which move from info to debug. */
export class FrameworkLogger implements LoggerService {
  constructor(private readonly inner: LoggerService) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest.at(-1);
    if (typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context) && this.inner.debug) this.inner.debug(message, ...rest);
    else this.inner.log(message, ...rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.inner.error(message, ...rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.inner.warn(message, ...rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.inner.debug?.(message, ...rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.inner.verbose?.(message, ...rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    (this.inner.fatal ?? this.inner.error).call(this.inner, message, ...rest);
  }

  setLogLevels(levels: LogLevel[]): void {
    this.inner.setLogLevels?.(levels);
  }
}
