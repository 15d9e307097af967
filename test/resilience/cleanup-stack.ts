/**
 * Everything the drills start (processes, servers, temporary directories) registers its teardown here,
 * so a failed drill, an exception or Ctrl-C still leaves no process on a port and no directory behind.
 * Each entry has an async form (graceful, bounded) and a synchronous form for the `exit` handler,
 * where nothing asynchronous runs any more.
 */
interface CleanupTask {
  name: string;
  run: () => Promise<void>;
  runSync: () => void;
}

const TASK_TIMEOUT_MS = 15_000;

export class CleanupStack {
  private readonly tasks: CleanupTask[] = [];

  /** Registers a teardown; the returned function unregisters it (after the owner cleaned up itself). */
  add(name: string, run: () => Promise<void>, runSync: () => void): () => void {
    const task = { name, run, runSync };
    this.tasks.push(task);
    return () => {
      const index = this.tasks.indexOf(task);
      if (index >= 0) this.tasks.splice(index, 1);
    };
  }

  /** Runs every teardown, newest first; one that fails or hangs falls back to its synchronous form. */
  async runAll(): Promise<void> {
    while (this.tasks.length > 0) {
      const task = this.tasks.pop() as CleanupTask;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          task.run(),
          new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error('timed out')), TASK_TIMEOUT_MS);
          }),
        ]);
      } catch (error) {
        process.stderr.write(`cleanup: ${task.name}: ${error instanceof Error ? error.message : String(error)}; forcing\n`);
        this.runQuietly(task);
      } finally {
        clearTimeout(timer);
      }
    }
  }

  runAllSync(): void {
    while (this.tasks.length > 0) this.runQuietly(this.tasks.pop() as CleanupTask);
  }

  private runQuietly(task: CleanupTask): void {
    try {
      task.runSync();
    } catch {
      // Last resort during exit: the other tasks must still run.
    }
  }
}

/** The one stack of the drill run. */
export const cleanup = new CleanupStack();
