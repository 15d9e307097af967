import { EVENT_ACTIONS } from '../actions';
import { SAMPLE_MESSAGES } from './sample-messages';
import { validateEventMessage } from './validate-event-message';

describe('SAMPLE_MESSAGES', () => {
  it('has one message per action', () => {
    expect(Object.keys(SAMPLE_MESSAGES).sort()).toEqual([...EVENT_ACTIONS].sort());
  });

  it.each(EVENT_ACTIONS)('%s sample is valid and left untouched', (action) => {
    const before = structuredClone(SAMPLE_MESSAGES[action]);
    expect(validateEventMessage(action, SAMPLE_MESSAGES[action])).toEqual([]);
    expect(SAMPLE_MESSAGES[action]).toEqual(before);
  });
});
