import { backlogScenario } from './backlog.scenario';
import { botScenario } from './bot.scenario';
import { endToEndScenario, oneEndpointScenario, scaledEndToEndScenario } from './delivery.scenarios';
import { batchScenario, singlePostScenario } from './ingest.scenarios';
import { isolationScenario } from './isolation.scenario';
import { latencyScenario } from './latency.scenario';
import { memoryScenario } from './memory.scenario';
import type { Scenario } from './scenario';

/**
 * In run order. Isolation leaves retries of its hanging endpoint behind and backlog restarts the
 * worker, so both come last.
 */
export const SCENARIOS: readonly Scenario[] = [
  singlePostScenario,
  batchScenario,
  endToEndScenario,
  scaledEndToEndScenario,
  oneEndpointScenario,
  latencyScenario,
  botScenario,
  memoryScenario,
  isolationScenario,
  backlogScenario,
];
