import type { TaskQueue } from '@app/runtime';
import type { AccountDeletionRunner } from './account-deletion-runner.service';
import type { ErasureRunner } from './erasure-runner.service';
import type { RedactionPass } from './redaction-pass.service';
import type { RedeliveryRunner } from './redelivery-runner.service';
import { TaskJobs } from './task-jobs.service';

/** Runners that record which task each was asked to take (no database: the dispatch only). */
function jobs() {
  const taken: string[] = [];
  const runner = (kind: string) => ({ take: (id: string) => Promise.resolve(taken.push(`${kind} ${id}`) > 0) });
  const woken: number[] = [];
  const taskJobs = new TaskJobs(
    {} as TaskQueue,
    runner('redelivery') as unknown as RedeliveryRunner,
    runner('erasure') as unknown as ErasureRunner,
    runner('account-deletion') as unknown as AccountDeletionRunner,
    { wake: () => woken.push(1) } as unknown as RedactionPass,
  );
  return { taskJobs, taken, woken };
}

describe('TaskJobs', () => {
  it('hands each kind of job to its runner by id, and wakes the redaction pass', async () => {
    const { taskJobs, taken, woken } = jobs();
    for (const data of [
      { kind: 'redelivery', id: 'r1' },
      { kind: 'erasure', id: 'e1' },
      { kind: 'account-deletion', id: '42' },
      { kind: 'redaction', id: '7' },
    ]) {
      await expect(taskJobs.start({ data } as never)).resolves.toBe(true);
    }
    expect(taken).toEqual(['redelivery r1', 'erasure e1', 'account-deletion 42']);
    expect(woken).toHaveLength(1);
  });

  it('ignores a job that is not ids-only task data', async () => {
    const { taskJobs, taken, woken } = jobs();
    for (const data of [null, {}, { kind: 'vacuum', id: '1' }, { kind: 'erasure', id: 1 }, { kind: 'erasure' }]) {
      await expect(taskJobs.start({ data } as never)).resolves.toBe(false);
    }
    expect(taken).toEqual([]);
    expect(woken).toEqual([]);
  });
});
