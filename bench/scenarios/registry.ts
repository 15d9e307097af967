import { backlogScenario } from './backlog.scenario';
import { backlogDrainScenario } from './backlog-drain.scenario';
import { botScenario } from './bot.scenario';
import { endToEndScenario, oneEndpointScenario, scaledEndToEndScenario } from './delivery.scenarios';
import { destinationsScenario } from './destinations.scenario';
import { batchScenario, singlePostScenario } from './ingest.scenarios';
import { isolationScenario } from './isolation.scenario';
import { loadStepsScenario } from './load-steps.scenario';
import { memoryScenario } from './memory.scenario';
import { noisyNeighbourScenario } from './noisy-neighbour.scenario';
import { orderedScenario } from './ordered.scenario';
import { paceScenario } from './pace.scenario';
import type { Scenario } from './scenario';

/**
 * In run order. Memory (mostly a 10-minute soak, the least sensitive to other work on the machine)
 * comes first; isolation leaves retries of its hanging endpoint behind and backlog restarts the
 * worker, so both come last. Noisy neighbour and ordered (issue 15), then pace (issue 32) and destinations (issue 33), run after the scenarios that existed
 * before them, so those keep the conditions their earlier figures were measured in. Load steps (issue
 * 19) took the place of the latency scenario it extends; backlog drain (issue 19) stops and restarts the
 * worker, so it runs last.
 */
export const SCENARIOS: readonly Scenario[] = [
  memoryScenario,
  singlePostScenario,
  batchScenario,
  endToEndScenario,
  scaledEndToEndScenario,
  oneEndpointScenario,
  loadStepsScenario,
  botScenario,
  isolationScenario,
  noisyNeighbourScenario,
  orderedScenario,
  paceScenario,
  destinationsScenario,
  backlogScenario,
  backlogDrainScenario,
];
