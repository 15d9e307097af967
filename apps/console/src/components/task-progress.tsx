import { useEffect } from 'preact/hooks';
import { redeliveryTask } from '../api/admin';
import type { RedeliveryTaskView } from '@app/payloads/admin-api.types';
import { formatCount } from '../lib/format';
import { useInterval, useLoader } from '../lib/use-loader';
import { ErrorMessage } from './bits';

/** Watches a bulk redelivery task until it is done (or failed), with a progress bar; `onFinished` then refreshes the page's data. */
export function TaskProgress({ taskId, count, onFinished, load = redeliveryTask }: {
  taskId: string;
  count?: number;
  onFinished?: () => void;
  /** Reads the task (the portal reads its own tasks through its own API). */
  load?: (taskId: string) => Promise<Pick<RedeliveryTaskView, 'status' | 'total' | 'done'> & { error?: string | null }>;
}) {
  const task = useLoader(() => load(taskId), [taskId]);
  const running = !task.data || task.data.status === 'running';
  useInterval(task.reload, 1000, running && !task.error);
  const total = task.data?.total ?? count ?? 0;
  const done = task.data?.done ?? 0;
  const state = task.data?.status ?? 'running';
  useEffect(() => {
    if (state !== 'running') onFinished?.();
    // Only the change of state matters, not a new onFinished function on each render.
  }, [state]);
  return (
    <div class="task" data-task-status={state}>
      <progress max={Math.max(total, 1)} value={state === 'done' && total === 0 ? 1 : done} aria-label="Redelivery progress" />
      <span class="task-text">
        {state === 'done' ? 'Done: ' : state === 'failed' ? 'Failed: ' : 'Redelivering: '}
        {formatCount(done)} of {formatCount(total)} events
        {task.data?.error ? ` (${task.data.error})` : ''}
      </span>
      <span class="muted mono"> task {taskId}</span>
      <ErrorMessage error={task.error} />
    </div>
  );
}
