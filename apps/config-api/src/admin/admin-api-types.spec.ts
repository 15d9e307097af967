import * as wire from '@app/payloads';
import { BOT_CALL_OUTCOMES, BOT_WEBHOOK_TYPES, EVENT_STATUSES } from '@app/persistence/testing';

/**
 * The admin API's answer types live in @app/payloads so the browser console can bundle them, apart from
 * the database's value lists they mirror (persistence loads without the @app aliases, in migrations and
 * the test set-up, so it keeps its own). This check makes the two fail together instead of drifting.
 */
describe('admin API wire types', () => {
  it('lists the same statuses, bot webhook types and bot call outcomes as the database', () => {
    expect(wire.EVENT_STATUSES).toEqual(EVENT_STATUSES);
    expect(wire.BOT_WEBHOOK_TYPES).toEqual(BOT_WEBHOOK_TYPES);
    expect(wire.BOT_CALL_OUTCOMES).toEqual(BOT_CALL_OUTCOMES);
  });
});
