import type { BenchContext } from '../support/bench-context';
import { type BrokerSink, NatsSink, RabbitMqSink } from '../support/broker-sinks';
import { batches, cpuMeter, settleMs } from './measure';
import { atMost, type Figure, type Scenario } from './scenario';

const RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';
const NATS = '127.0.0.1:4222';
/** Issue 33: a delivery to one of several destinations costs the worker at most this much more than a lone one. */
const FAN_OUT_TARGET = 1.3;
/** How long a destination change may take to reach ingest's directory (the settings channel, docs/destinations.md). */
const CHANGE_SETTLES_MS = 1_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `total` events in batches to `account`, until every call arrived at `hosts` (one per host per
 * event): ingest's CPU per event while it took them, the worker's per delivery until the last call.
 */
async function toWebhooks(bench: BenchContext, account: number, tag: string, total: number, hosts: readonly string[]) {
  const worker = cpuMeter({ processes: [bench.worker.process] });
  const sent = await batches(bench, bench.service(undefined, [account]), tag, total);
  const deliveries = total * hosts.length;
  const stats = await bench.receiver.waitForCalls(tag, hosts, deliveries, settleMs(deliveries));
  const workerUsPerDelivery = (worker() * 1000) / deliveries;
  await bench.receiver.forget(tag);
  const seconds = ((stats.lastCall ?? 0) - sent.result.startedAt) / 1000;
  return { ingestUsPerEvent: sent.cpuUsPerEventByProcess[0] ?? 0, workerUsPerDelivery, deliveredPerSecond: deliveries / seconds, repeats: stats.duplicates - total * (hosts.length - 1) };
}

/** `total` events to an account whose one destination publishes to `sink`: deliveries per second and worker CPU per delivery. */
async function toBroker(bench: BenchContext, account: number, tag: string, total: number, sink: BrokerSink) {
  const worker = cpuMeter({ processes: [bench.worker.process] });
  const sent = await batches(bench, bench.service(undefined, [account]), tag, total);
  const { lastAt, count } = await sink.waitForMessages(total, settleMs(total));
  return { deliveredPerSecond: total / ((lastAt - sent.result.startedAt) / 1000), workerUsPerDelivery: (worker() * 1000) / total, messages: count };
}

/** Fan-out: the same events to an account with its push URL alone, and to one with the push URL and 3 webhook destinations. */
async function fanOut(bench: BenchContext, figures: Figure[], notes: string[]): Promise<void> {
  const [loneHost, primaryHost, ...destinationHosts] = bench.destinationHosts.slice(0, 5) as [string, string, string, string, string];
  const lone = await bench.accounts.create('dest-lone', bench.receiver.url(loneHost));
  const fanned = await bench.accounts.create('dest-fan', bench.receiver.url(primaryHost));
  for (const host of destinationHosts) await bench.accounts.addDestination(fanned, { type: 'webhook', target: bench.receiver.url(host) });
  await pause(CHANGE_SETTLES_MS);
  const fanHosts = [primaryHost, ...destinationHosts];
  // Not measured: the destination path compiled as the primary's already is by the bench's warm-up.
  await toWebhooks(bench, fanned, 'dfw', 500, fanHosts);
  const total = bench.size(2_000, 10_000);
  const one = await toWebhooks(bench, lone, 'dfo', total, [loneHost]);
  const four = await toWebhooks(bench, fanned, 'dff', total, fanHosts);
  const workerRatio = four.workerUsPerDelivery / one.workerUsPerDelivery;
  const ingestRatio = four.ingestUsPerEvent / one.ingestUsPerEvent;
  figures.push(
    { label: 'fan-out to 3 webhooks: worker CPU per delivery', value: four.workerUsPerDelivery, unit: 'µs', reference: { label: 'push URL alone', value: one.workerUsPerDelivery } },
    { label: 'fan-out to 3 webhooks: worker CPU per delivery ÷ push URL alone', value: workerRatio, unit: 'ratio', target: atMost(workerRatio, FAN_OUT_TARGET, `≤ ${FAN_OUT_TARGET} (issue 33)`) },
    { label: 'fan-out to 3 webhooks: ingest CPU per event', value: four.ingestUsPerEvent, unit: 'µs', reference: { label: 'push URL alone', value: one.ingestUsPerEvent } },
    { label: 'fan-out to 3 webhooks: ingest CPU per event ÷ push URL alone', value: ingestRatio, unit: 'ratio' },
  );
  notes.push(
    `fan-out: ${total} events to the push URL alone (${Math.round(one.deliveredPerSecond)} deliveries/s) and to the push URL + 3 webhook destinations (${total * 4} deliveries, ${Math.round(four.deliveredPerSecond)}/s); repeated calls ${one.repeats} and ${four.repeats}`,
  );
}

/**
 * The same number of events to a webhook, a RabbitMQ and a NATS destination, each the only
 * destination of an account without a push URL (its primary deliveries end no_endpoint, alike for
 * the three); then a paused webhook destination with a backlog, resumed.
 */
async function brokersAndBacklog(bench: BenchContext, figures: Figure[], notes: string[]): Promise<void> {
  const host = bench.destinationHosts[5] ?? '';
  const name = `benchdest_${bench.environment.runId.replace(/[^a-zA-Z0-9]/g, '')}`;
  const [rabbitmq, nats] = await Promise.all([RabbitMqSink.open(RABBITMQ, name), NatsSink.open(NATS, name)]);
  try {
    const accounts = {
      webhook: await bench.accounts.create('dest-webhook', null),
      rabbitmq: await bench.accounts.create('dest-rabbitmq', null),
      nats: await bench.accounts.create('dest-nats', null),
      paused: await bench.accounts.create('dest-paused', null),
    };
    await bench.accounts.addDestination(accounts.webhook, { type: 'webhook', target: bench.receiver.url(host) });
    await bench.accounts.addDestination(accounts.rabbitmq, { type: 'rabbitmq', target: rabbitmq.target });
    await bench.accounts.addDestination(accounts.nats, { type: 'nats', target: nats.target });
    const pausedId = await bench.accounts.addDestination(accounts.paused, { type: 'webhook', target: bench.receiver.url(host) });
    await bench.accounts.pauseDestination(accounts.paused, pausedId, true);
    await pause(CHANGE_SETTLES_MS);

    const total = bench.size(4_000, 20_000);
    const webhook = await toWebhooks(bench, accounts.webhook, 'dbw', total, [host]);
    const toRabbitMq = await toBroker(bench, accounts.rabbitmq, 'dbr', total, rabbitmq);
    const toNats = await toBroker(bench, accounts.nats, 'dbn', total, nats);
    for (const [label, run] of [['RabbitMQ', toRabbitMq], ['NATS JetStream', toNats]] as const) {
      figures.push(
        { label: `${label} destination: delivered`, value: run.deliveredPerSecond, unit: 'events/s', reference: { label: 'webhook destination', value: webhook.deliveredPerSecond } },
        { label: `${label} destination: ÷ webhook destination`, value: run.deliveredPerSecond / webhook.deliveredPerSecond, unit: 'ratio' },
        { label: `${label} destination: worker CPU per delivery`, value: run.workerUsPerDelivery, unit: 'µs', reference: { label: 'webhook destination', value: webhook.workerUsPerDelivery } },
      );
    }
    notes.push(`brokers: ${total} events each, ingest → the last message read back (the exchange's queue and the stream held in memory); messages seen: RabbitMQ ${toRabbitMq.messages}, NATS ${toNats.messages}`);

    const backlog = bench.size(2_000, 10_000);
    await batches(bench, bench.service(undefined, [accounts.paused]), 'dbp', backlog);
    // Given the time the backlog took to come in, a paused destination that leaked would show calls by now.
    await pause(2_000);
    const leaked = (await bench.receiver.stats('dbp')).byHost[host] ?? 0;
    const resumedAt = Date.now();
    await bench.accounts.pauseDestination(accounts.paused, pausedId, false);
    const drained = await bench.receiver.waitForCalls('dbp', [host], backlog, settleMs(backlog));
    await bench.receiver.forget('dbp');
    const drainPerSecond = backlog / (((drained.lastCall ?? 0) - resumedAt) / 1000);
    figures.push(
      { label: `paused webhook destination, ${backlog} waiting, resumed: drained`, value: drainPerSecond, unit: 'events/s', reference: { label: 'webhook destination, steady', value: webhook.deliveredPerSecond } },
      { label: 'paused destination resumed: drain ÷ steady', value: drainPerSecond / webhook.deliveredPerSecond, unit: 'ratio' },
    );
    notes.push(`paused: ${backlog} events accepted while paused, ${leaked} calls before resume (must be 0); drained from the resume call to the last arrival`);
    if (leaked > 0) throw new Error(`a paused destination was called ${leaked} times`);
  } finally {
    await Promise.all([rabbitmq.close(), nats.close()]);
  }
}

export const destinationsScenario: Scenario = {
  name: 'destinations',
  title: 'destinations (issue 33): one event to 3 webhook destinations, RabbitMQ and NATS against a webhook, a paused backlog resumed',
  async run(bench) {
    const figures: Figure[] = [];
    const notes: string[] = [];
    await fanOut(bench, figures, notes);
    await brokersAndBacklog(bench, figures, notes);
    return { name: this.name, title: this.title, figures, notes };
  },
};
