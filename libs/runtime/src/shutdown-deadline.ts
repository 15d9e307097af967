/** After SIGTERM or SIGINT the graceful close gets this long; then the process exits regardless. */
export const SHUTDOWN_DEADLINE_MS = 8000;

export interface ShutdownDeadline {
  /** From now on a signal starts the graceful close (Nest's shutdown hooks) under the deadline. */
  appReady(): void;
}

/**
 * Makes SIGTERM/SIGINT end the process promptly in every state. While the app is still starting
 * (waiting for PostgreSQL or Redis, say) nothing has been taken on, so the process exits at once.
 * Once it runs, Nest's shutdown hooks close it gracefully, and this only arms a last-resort deadline:
 * a close stuck on an unreachable dependency still ends. The listeners are `once`, so the signal Nest
 * re-raises after its hooks (and a second Ctrl-C) takes the default action: exit.
 */
export function armShutdownDeadline(processName: string, deadlineMs = SHUTDOWN_DEADLINE_MS): ShutdownDeadline {
  let ready = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!ready) {
      process.stderr.write(`[${processName}] ${signal} while starting: exiting\n`);
      process.exit(0);
    }
    const timer = setTimeout(() => {
      process.stderr.write(`[${processName}] still closing ${deadlineMs} ms after ${signal}: exiting now\n`);
      process.exit(1);
    }, deadlineMs);
    timer.unref();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return {
    appReady: () => {
      ready = true;
    },
  };
}
