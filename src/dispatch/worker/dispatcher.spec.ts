import type { AppConfig } from '../../config/app-config';
import type { PgNotifier } from '../../database/pg-notifier';
import type { Metrics } from '../../observability/metrics';
import type { WebhooksService } from '../../webhooks/webhooks.service';
import type { SecretCipher } from '../../webhooks/secret-cipher';
import type { AttemptOutcome, ClaimBatch, ClaimedDelivery, DeliveryRepository, SlotLimits, StoreTurns } from '../store/delivery.repository';
import { performance } from 'node:perf_hooks';
import { PACING_WINDOW_MS } from './claim-pacing';
import { Dispatcher } from './dispatcher';
import type { SendResult, WebhookSender } from '../sending/webhook-sender';

const CONFIG = {
  runsWorker: true,
  deliveryTimeoutMs: 1_000,
  leaseMarginMs: 1_000,
  dispatchConcurrency: 8,
  endpointConcurrency: 2,
  storeConcurrency: 8,
  retryScheduleMs: [0, 1_000],
  shutdownTimeoutMs: 200,
} as unknown as AppConfig;

let sequence = 0;
function claimed(webhookId: string, storeId = 'st_a'): ClaimedDelivery {
  sequence++;
  return {
    id: `del_${sequence}`,
    eventId: `evt_${sequence}`,
    webhookId,
    storeId,
    eventType: 'order.created',
    attemptNumber: 1,
    cycleAttempt: 1,
    body: '{}',
    url: `https://${webhookId}.test/`,
    secretSealed: 'sealed',
    previousSecretSealed: null,
    headersRevision: null,
    retrySchedule: null,
    webhookActive: true,
    ordered: false,
  };
}

const OK: SendResult = { startedAt: new Date(), durationMs: 1, statusCode: 200, error: null, responseBody: null, succeeded: true };

/** A database of due deliveries, claimed as DeliveryRepository.claimDue does (limit, per-endpoint and per-store slots). */
class FakeRepository {
  due: ClaimedDelivery[] = [];
  claims: Array<{ limit: number; limits: SlotLimits; turns: StoreTurns }> = [];
  recorded: AttemptOutcome[] = [];
  released: string[] = [];
  failClaims = 0;
  /** Answered by the next claim as when deliveries a rate limit put off come due. */
  deferredDueAt: number[] = [];
  /** Called with each written batch, as the database would release what an outcome lets go. */
  onRecorded: (outcomes: AttemptOutcome[]) => void = () => undefined;

  async claimDue(limit: number, _leaseMs: number, _token: string, limits: SlotLimits, turns: StoreTurns): Promise<ClaimBatch> {
    this.claims.push({ limit, limits: structuredClone(limits), turns });
    if (this.failClaims > 0) {
      this.failClaims--;
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    }
    const taken: ClaimedDelivery[] = [];
    const perEndpoint = new Map(limits.partial);
    const perStore = new Map(limits.partialStores);
    const crowded = new Set<string>();
    const locked = Math.min(limit, this.due.length);
    for (const delivery of this.due.slice(0, locked)) {
      if (limits.excluded.includes(delivery.webhookId) || limits.excludedStores.includes(delivery.storeId)) continue;
      const available = perEndpoint.get(delivery.webhookId) ?? limits.perEndpoint;
      const storeAvailable = perStore.get(delivery.storeId) ?? limits.perStore;
      if (storeAvailable <= 0) crowded.add(delivery.storeId);
      if (available <= 0 || storeAvailable <= 0) continue;
      perEndpoint.set(delivery.webhookId, available - 1);
      perStore.set(delivery.storeId, storeAvailable - 1);
      taken.push(delivery);
    }
    this.due = this.due.filter((d) => !taken.includes(d));
    const deferredDueAt = this.deferredDueAt;
    this.deferredDueAt = [];
    return {
      deliveries: taken,
      turnsCut: locked >= limit,
      crowdedStores: [...crowded],
      lastStore: taken.at(-1)?.storeId ?? null,
      deferredDueAt,
    };
  }
  async recordOutcomes(outcomes: AttemptOutcome[]) {
    this.recorded.push(...outcomes);
    this.onRecorded(outcomes);
    return { scheduled: [], failing: [] };
  }
  async nextDueAt() {
    return null;
  }
  async releaseLeases(ids: string[]) {
    this.released.push(...ids);
  }
}

async function until(condition: () => boolean, deadlineMs = 2_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('Dispatcher', () => {
  let repository: FakeRepository;
  let answers: Array<(result: SendResult) => void>;
  let hang: boolean;
  /** What an attempt answers when it is not held (`hang`). */
  let answer: SendResult;
  let dispatcher: Dispatcher;

  function build(config: AppConfig): Dispatcher {
    const sender = {
      send: () => (hang ? new Promise<SendResult>((resolve) => answers.push(resolve)) : Promise.resolve(answer)),
    } as unknown as WebhookSender;
    const counter = { inc: () => undefined, observe: () => undefined };
    const metrics = { deliveryAttempts: counter, deliveryAttemptDuration: counter, deliveriesFinished: counter } as unknown as Metrics;
    const notifier = { listen: () => undefined, onReconnect: () => undefined } as unknown as PgNotifier;
    const cipher = { decrypt: () => 'whsec_test' } as unknown as SecretCipher;
    return new Dispatcher(config, repository as unknown as DeliveryRepository, sender, cipher, notifier, metrics, {} as WebhooksService);
  }

  beforeEach(() => {
    repository = new FakeRepository();
    answers = [];
    hang = false;
    answer = OK;
    dispatcher = build(CONFIG);
  });

  afterEach(async () => {
    for (const answer of answers) answer(OK);
    await dispatcher.beforeApplicationShutdown();
  });

  it('claims due deliveries when woken, sends each and records its outcome', async () => {
    repository.due = [claimed('a'), claimed('b'), claimed('c')];
    dispatcher.onApplicationBootstrap();
    await until(() => repository.recorded.length === 3);
    expect(repository.recorded.every((o) => o.status === 'succeeded')).toBe(true);
    expect(repository.claims[0].limit).toBe(CONFIG.dispatchConcurrency);
  });

  it('never claims more for an endpoint than its share of the slots, so a slow one cannot take them all', async () => {
    hang = true;
    repository.due = [claimed('slow'), claimed('slow'), claimed('slow'), claimed('slow'), claimed('fast')];
    dispatcher.onApplicationBootstrap();
    await until(() => answers.length === 3);
    dispatcher.wake();
    await until(() => repository.claims.length >= 2);
    const last = repository.claims.at(-1)!;
    expect(last.limits.excluded).toEqual(['slow']);
    expect(last.limits.partial).toEqual(new Map([['fast', 1]]));
    expect(repository.due.map((d) => d.webhookId)).toEqual(['slow', 'slow']);
  });

  it('never gives one store more than its share of the slots, and claims without it while they are all taken', async () => {
    dispatcher = build({ ...CONFIG, storeConcurrency: 3 } as AppConfig);
    hang = true;
    repository.due = [...['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => claimed(id, 'st_noisy')), claimed('b1', 'st_quiet')];
    dispatcher.onApplicationBootstrap();
    await until(() => answers.length === 4);
    dispatcher.wake();
    await until(() => repository.claims.length >= 2);
    const last = repository.claims.at(-1)!;
    expect(last.limits.excludedStores).toEqual(['st_noisy']);
    expect(last.limits.partialStores).toEqual(new Map([['st_quiet', 2]]));
    expect(repository.due.map((d) => d.webhookId)).toEqual(['a4', 'a5']);
  });

  it('claims a full store’s due deliveries again once a share of its slots is free, not before', async () => {
    dispatcher = build({ ...CONFIG, storeConcurrency: 2 } as AppConfig);
    hang = true;
    repository.due = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => claimed(id, 'st_busy'));
    dispatcher.onApplicationBootstrap();
    await until(() => answers.length === 2);
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(repository.claims).toHaveLength(1);
    answers.shift()!(OK);
    await until(() => answers.length === 2);
    expect(repository.claims).toHaveLength(2);
    expect(repository.due.map((d) => d.webhookId)).toEqual(['a4', 'a5']);
  });

  it('gives an endpoint whose attempt timed out fewer slots in the next claim', async () => {
    answer = { ...OK, statusCode: null, error: 'timeout: no complete answer within 1000 ms', succeeded: false };
    repository.due = [claimed('slow')];
    dispatcher.onApplicationBootstrap();
    await until(() => repository.recorded.length === 1);
    dispatcher.wake();
    await until(() => repository.claims.length >= 2);
    expect(repository.claims.at(-1)!.limits.partial).toEqual(new Map([['slow', 1]]));
  });

  it('starts each claim’s turns among stores after the last store the claim before served', async () => {
    repository.due = [claimed('a', 'st_1'), claimed('b', 'st_2')];
    dispatcher.onApplicationBootstrap();
    await until(() => repository.recorded.length === 2);
    dispatcher.wake();
    await until(() => repository.claims.length >= 2);
    expect(repository.claims.map((c) => c.turns.after).slice(0, 2)).toEqual(['', 'st_2']);
  });

  it('while its event loop is busy, waits for half its slots, and claims with a quarter once the loop has quietened', async () => {
    let utilization = 1;
    const loop = jest.spyOn(performance, 'eventLoopUtilization').mockImplementation(() => ({ idle: 0, active: 0, utilization }));
    try {
      const built = Date.now();
      dispatcher = build(CONFIG);
      hang = true;
      repository.due = Array.from({ length: 20 }, (_, i) => claimed(`wh_${i}`, `st_${i}`));
      dispatcher.onApplicationBootstrap();
      await until(() => answers.length === CONFIG.dispatchConcurrency);
      await until(() => Date.now() - built >= PACING_WINDOW_MS);
      // 3 of 8 free: enough for an idle loop (a quarter), not for a busy one (half).
      for (const answer of answers.splice(0, 3)) answer(OK);
      for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(repository.claims).toHaveLength(1);
      // Nothing frees a slot now: only the worker's own second look finds the loop idle.
      utilization = 0;
      await until(() => repository.claims.length === 2, 1_000);
      expect(repository.claims[1].limit).toBe(3);
    } finally {
      loop.mockRestore();
    }
  });

  it('claims again at once when a claim was full', async () => {
    repository.due = Array.from({ length: 20 }, (_, i) => claimed(`wh_${i}`));
    dispatcher.onApplicationBootstrap();
    await until(() => repository.recorded.length === 20);
    expect(repository.claims.length).toBeGreaterThanOrEqual(3);
  });

  it('backs off after a failed claim and claims again once the database answers', async () => {
    repository.failClaims = 2;
    repository.due = [claimed('a')];
    dispatcher.onApplicationBootstrap();
    await until(() => repository.claims.length === 1);
    dispatcher.wake();
    dispatcher.wake();
    expect(repository.claims).toHaveLength(1);
    await until(() => repository.recorded.length === 1, 3_000);
    expect(repository.claims).toHaveLength(3);
  });

  it('offers a publish its free slots only while no claim is under way, and sends what the publish leased', async () => {
    dispatcher.onApplicationBootstrap();
    await until(() => repository.claims.length === 1);
    await new Promise((resolve) => setImmediate(resolve));
    const offer = dispatcher.offerSlots();
    expect(offer).toMatchObject({ limit: CONFIG.dispatchConcurrency, perEndpoint: 2 });
    // One hand-off at a time, and claims wait for it.
    expect(dispatcher.offerSlots()).toBeUndefined();
    dispatcher.takeHandOff([claimed('leased')]);
    await until(() => repository.recorded.length === 1);
    expect(repository.recorded[0].deliveryId).toMatch(/^del_/);
  });

  it('writes the end of an ordered delivery at once and claims the next one it released', async () => {
    const first = { ...claimed('ordered'), ordered: true };
    const next = { ...claimed('ordered'), ordered: true };
    repository.due = [first];
    repository.onRecorded = (outcomes) => {
      if (outcomes.some((o) => o.deliveryId === first.id)) repository.due.push(next);
    };
    dispatcher.onApplicationBootstrap();
    // Nothing else wakes the worker here (no notifications, no sweep): the release's claim does.
    await until(() => repository.recorded.length === 2);
    expect(repository.recorded.map((o) => o.deliveryId)).toEqual([first.id, next.id]);
  });

  it('claims the deliveries a rate limit put off when their second comes', async () => {
    const later = claimed('limited');
    repository.due = [claimed('limited')];
    repository.deferredDueAt = [Date.now() + 100];
    setTimeout(() => repository.due.push(later), 50);
    dispatcher.onApplicationBootstrap();
    await until(() => repository.recorded.some((o) => o.deliveryId === later.id));
    expect(repository.claims.length).toBeGreaterThanOrEqual(2);
  });

  it('on shutdown, gives back the claims whose attempts did not finish in time', async () => {
    hang = true;
    repository.due = [claimed('a')];
    dispatcher.onApplicationBootstrap();
    await until(() => answers.length === 1);
    await dispatcher.beforeApplicationShutdown();
    expect(repository.released).toHaveLength(1);
  });
});
