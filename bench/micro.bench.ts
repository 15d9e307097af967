import { createHash, createHmac } from 'node:crypto';
import { encodeDeliveryBody, SAMPLE_MESSAGES, validateEventMessage } from '@app/payloads';
import { openApiSign, signWebhook } from '@app/signing';

export interface MicroResult {
  name: string;
  baseline: string;
  candidateOpsPerSecond: number;
  baselineOpsPerSecond: number;
  /** candidate time per operation ÷ baseline time per operation: 1.0 means as fast as the baseline. */
  ratio: number;
}

interface Case {
  name: string;
  baseline: string;
  candidate: () => unknown;
  reference: () => unknown;
}

/** Sink so the engine cannot drop the work as dead code. */
let sink: unknown;

function opsPerSecond(work: () => unknown, durationMs: number): number {
  let operations = 0;
  const started = process.hrtime.bigint();
  const budget = BigInt(durationMs) * 1_000_000n;
  let elapsed = 0n;
  while (elapsed < budget) {
    for (let i = 0; i < 50; i += 1) sink = work();
    operations += 50;
    elapsed = process.hrtime.bigint() - started;
  }
  return operations / (Number(elapsed) / 1e9);
}

/**
 * Candidate and baseline run in alternating rounds so machine noise hits both alike; the best round
 * of each counts (the least disturbed one).
 */
function measure(testCase: Case, rounds: number, roundMs: number): MicroResult {
  opsPerSecond(testCase.candidate, 100);
  opsPerSecond(testCase.reference, 100);
  let candidate = 0;
  let baseline = 0;
  for (let round = 0; round < rounds; round += 1) {
    candidate = Math.max(candidate, opsPerSecond(testCase.candidate, roundMs));
    baseline = Math.max(baseline, opsPerSecond(testCase.reference, roundMs));
  }
  void sink;
  return { name: testCase.name, baseline: testCase.baseline, candidateOpsPerSecond: candidate, baselineOpsPerSecond: baseline, ratio: baseline / candidate };
}

export function runMicroBenchmarks(rounds = 5, roundMs = 300): MicroResult[] {
  const close = SAMPLE_MESSAGES.ImSubSession_close;
  const closeText = JSON.stringify(close);
  const customer = SAMPLE_MESSAGES.Customer_create;
  const body = JSON.stringify({ action: 'ImSubSession_close', message: close });
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const key = Buffer.from(secret.slice(6), 'base64');
  const cases: Case[] = [
    {
      name: 'validate ImSubSession_close message',
      baseline: 'JSON.parse(JSON.stringify(message))',
      candidate: () => validateEventMessage('ImSubSession_close', close),
      reference: () => JSON.parse(JSON.stringify(close)) as unknown,
    },
    {
      name: 'validate Customer_create message',
      baseline: 'JSON.parse(JSON.stringify(message))',
      candidate: () => validateEventMessage('Customer_create', customer),
      reference: () => JSON.parse(JSON.stringify(customer)) as unknown,
    },
    {
      name: 'form-encode ImSubSession_close body',
      baseline: 'JSON.stringify of the same body',
      candidate: () => encodeDeliveryBody('form', { eventId: 'e', action: 'ImSubSession_close', messageText: closeText, acceptedAt: new Date(0), source: '' }).body,
      reference: () => JSON.stringify({ action: 'ImSubSession_close', message: close }),
    },
    {
      name: 'Standard Webhooks signature headers',
      baseline: 'one raw HMAC-SHA256 of the same bytes',
      candidate: () => signWebhook([secret], 'evt_1', 1_700_000_000, body),
      reference: () => createHmac('sha256', key).update(`evt_1.1700000000.${body}`).digest('base64'),
    },
    {
      name: 'Open API v2 sign',
      baseline: 'one raw SHA-256 of the same string',
      candidate: () => openApiSign({ email: 'a@example.com', openApiToken: 'token', timestamp: 1_700_000_000, nonce: 'n-1' }),
      reference: () => createHash('sha256').update('a@example.com&token&1700000000&n-1&v2').digest('hex'),
    },
  ];
  return cases.map((testCase) => measure(testCase, rounds, roundMs));
}
