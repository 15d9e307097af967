import { join } from 'node:path';
import { ipcCall, waitReady } from '../support/ipc';
import type { ProcessSupervisor, SupervisedProcess } from '../support/process-supervisor';
import type { LoadPlan, LoadResult } from './load-plan';

/** The load generator, a process of its own so its CPU is not the bench's or the service's. */
export class LoadControl {
  private constructor(private readonly process: SupervisedProcess) {}

  static async start(supervisor: ProcessSupervisor): Promise<LoadControl> {
    const child = supervisor.start('load-generator', join(__dirname, 'load-generator.process.js'), {});
    await waitReady(child.child, 'load generator', 15_000);
    return new LoadControl(child);
  }

  run(plan: LoadPlan): Promise<LoadResult> {
    return ipcCall<LoadResult>(this.process.child, 'run', plan, plan.deadlineMs + 30_000);
  }
}
