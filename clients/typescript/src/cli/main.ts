/** The command line's flow: words → command → run, and the exit status of how it ended. */
import { HELP, parseArguments, UsageError } from './arguments.js';
import { CommandFailed, CredentialsRefused, FeedUnavailable } from './feed.js';
import { listen, type Output, replay } from './listen.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, credentials: 3 } as const;

class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

const STANDARD_OUTPUT: Output = {
  line: (text) => process.stdout.write(`${text}\n`),
  note: (text) => process.stderr.write(`event-callbacks: ${text}\n`),
};

/** Runs one command; answers its exit status. SIGINT (Ctrl+C) and SIGTERM stop it with status 0. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv, output: Output = STANDARD_OUTPUT): Promise<number> {
  let command;
  try {
    command = parseArguments(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.note(error.message);
    return EXIT.usage;
  }
  if (command.command === 'help') {
    process.stdout.write(HELP);
    return EXIT.ok;
  }
  const controller = new AbortController();
  const stop = (): void => controller.abort(new Interrupted('stopped'));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    if (command.command === 'listen') await listen(command, output, controller.signal);
    else await replay(command, output, controller.signal);
    return EXIT.ok;
  } catch (error) {
    if (controller.signal.aborted) {
      output.note(command.command === 'listen' && command.state ? `stopped; the place is kept in ${command.state}` : 'stopped');
      return EXIT.ok;
    }
    if (error instanceof UsageError) {
      output.note(error.message);
      return EXIT.usage;
    }
    if (error instanceof CredentialsRefused) {
      output.note(error.message);
      return EXIT.credentials;
    }
    if (error instanceof CommandFailed || error instanceof FeedUnavailable) {
      output.note(error.message);
      return EXIT.failed;
    }
    output.note(`failed: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failed;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
