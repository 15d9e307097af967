import {
  atStepSql,
  EVENT_STATUSES,
  FINAL_STATUS_LIST,
  isAtStep,
  isDueSql,
  isFinalStatus,
  isPendingSql,
  isUndatedSql,
  NEW_EVENT_STEP_VALUES,
  PENDING_EVENT_STATUSES,
  RESTART_SERIES,
} from './event-lifecycle';

describe('event lifecycle SQL', () => {
  it('spells the pending predicate exactly as the partial indexes over pending rows do', () => {
    expect(isPendingSql()).toBe(`status IN ('queued', 'retrying')`);
    expect(isPendingSql('e')).toBe(`e.status IN ('queued', 'retrying')`);
    expect(isDueSql()).toBe(`status IN ('queued', 'retrying') AND next_attempt_at <= now()`);
    expect(isUndatedSql('e')).toBe(`e.status IN ('queued', 'retrying') AND e.next_attempt_at IS NULL`);
  });

  it('splits every status into pending or final, never both', () => {
    const final = FINAL_STATUS_LIST.slice(1, -1).split(', ').map((quoted) => quoted.slice(1, -1));
    expect([...PENDING_EVENT_STATUSES, ...final].sort()).toEqual([...EVENT_STATUSES].sort());
    expect(final).toEqual(['delivered', 'failed', 'filtered', 'no_endpoint']);
  });

  it('guards a step on series, attempts in the series and a status that is not final, which only the key serves', () => {
    expect(atStepSql('e', 'v')).toBe(
      `e.series = v.series AND e.series_attempts = v.series_attempts AND e.status::text NOT IN ('delivered', 'failed', 'filtered', 'no_endpoint')`,
    );
    expect(atStepSql('e', 'v')).not.toContain(isPendingSql('e'));
  });

  it('spells the same guard for a loaded row: pending, same series, same attempts in it', () => {
    const row = { status: 'retrying', series: 2, seriesAttempts: 3 };
    expect(isAtStep(row, { series: 2, attempt: 3 })).toBe(true);
    expect(isAtStep(row, { series: 1, attempt: 3 })).toBe(false);
    expect(isAtStep(row, { series: 2, attempt: 2 })).toBe(false);
    expect(isAtStep({ ...row, status: 'delivered' }, { series: 2, attempt: 3 })).toBe(false);
  });

  it('tells a final status from a pending one or a worker result that is no status', () => {
    expect(EVENT_STATUSES.filter(isFinalStatus)).toEqual(['delivered', 'failed', 'filtered', 'no_endpoint']);
    expect(isFinalStatus('stale')).toBe(false);
    expect(isFinalStatus('retrying')).toBe(false);
  });

  it('starts new rows and restarted series queued and due now', () => {
    expect(NEW_EVENT_STEP_VALUES).toBe(`'queued', now()`);
    expect(RESTART_SERIES).toContain(`series = events.series + 1, series_attempts = 0, status = 'queued', next_attempt_at = now()`);
  });
});
