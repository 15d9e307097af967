import type { ChildProcess } from 'node:child_process';

/** One request over a child's IPC channel; the answer carries the same id. */
interface IpcRequest {
  id: number;
  type: string;
  payload: unknown;
}

interface IpcAnswer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

function isAnswer(message: unknown): message is IpcAnswer {
  return typeof message === 'object' && message !== null && 'id' in message && 'ok' in message;
}

let nextId = 1;

/** Sends `type` to a forked child and resolves with its answer; fails after `timeoutMs` or when the child exits. */
export function ipcCall<T>(child: ChildProcess, type: string, payload: unknown, timeoutMs: number): Promise<T> {
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown): void => {
      if (!isAnswer(message) || message.id !== id) return;
      done();
      if (message.ok) resolve(message.result as T);
      else reject(new Error(`${type}: ${message.error ?? 'failed'}`));
    };
    const onExit = (): void => {
      done();
      reject(new Error(`${type}: the child process exited before answering`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${type}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
    const request: IpcRequest = { id, type, payload };
    child.send(request);
  });
}

/**
 * Child side: answers each request with `handler`; the child exits when its parent goes away, so a
 * killed bench never leaves a receiver or load generator behind.
 */
export function serveIpc(handler: (type: string, payload: unknown) => Promise<unknown>): void {
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: IpcRequest) => {
    handler(message.type, message.payload).then(
      (result) => process.send?.({ id: message.id, ok: true, result } satisfies IpcAnswer),
      (error: unknown) => process.send?.({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) } satisfies IpcAnswer),
    );
  });
}

/** Resolves when a forked child says `{ready: true}` (sent once it can serve); fails after `timeoutMs`. */
export function waitReady(child: ChildProcess, name: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown): void => {
      if (typeof message !== 'object' || message === null || !('ready' in message)) return;
      done();
      resolve();
    };
    const onExit = (): void => {
      done();
      reject(new Error(`${name} exited before it was ready`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${name} was not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
