import { resolve } from 'node:path';

/** The repository's root: the transpiled tree, the default results file and the profiles are placed from it. */
export const ROOT = resolve(__dirname, '..', '..');
export const ADMIN_KEY = 'hl_bench_admin_key_0123456789abcdef';
export const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString('base64');
export const STORE = 'st_default';
export const ENDPOINTS = 10;
export const DISPATCH_CONCURRENCY = 512;
export const ENDPOINT_CONCURRENCY = 64;
export const DELIVERY_TIMEOUT_MS = 2000;
export const RETRY_SCHEDULE_MS = [0, 1000, 4000];
export const SCENARIOS = [
  'ceiling',
  'api',
  'throughput',
  'publish-filtered',
  'latency',
  'isolation',
  'retry',
  'ratelimit',
  'ordered',
  'backlog',
  'peers',
  'claim',
  'retention',
  'noisy-neighbour',
  'many-stores',
  'storage',
] as const;
/** Where the peers scenario finds Redis for BullMQ. */
export const REDIS = { host: '127.0.0.1', port: 6379 };
/** The limited endpoint's rateLimitPerSecond in the ratelimit scenario. */
export const RATE_LIMIT_PER_SECOND = 10;
export type Scenario = (typeof SCENARIOS)[number];

export interface Options {
  quick: boolean;
  clients: boolean;
  only: Set<Scenario>;
  profile: boolean;
  sqlStats: boolean;
  logLevel: string;
  isoRate?: number;
  /** Peers scenario: Hookline also drains with this many ROLE=worker processes, each (e.g. 1,2,4). */
  workers: number[];
  /** With `workers`: the best setting's DISPATCH_CONCURRENCY shared among the processes, not each's. */
  workersShare: boolean;
  /** Peers scenario: only these contenders (ceiling, pg-boss, bullmq, hookline); all when empty. */
  contenders: string[];
  /** Peers scenario: deliveries per drain instead of the size's. */
  peersDeliveries?: number;
  /** Claim scenario: finished deliveries beside the due ones instead of the size's. */
  claimFinished?: number;
  keep: boolean;
  out: string;
}

export interface Sizes {
  ceilingWarmupMs: number;
  ceilingMs: number;
  apiWarmupSec: number;
  apiSec: number;
  apiConnections: number;
  throughputEvents: number;
  /** Events (× 10 endpoints) of each publish-filtered phase. */
  publishFilteredEvents: number;
  /** Pairs of publish-filtered phases, one without filters and one with; odd, so the median is one pair's. */
  publishFilteredRounds: number;
  latencyRate: number;
  /** Before the fixed rate: this long at 100/s, so that Hookline's publish path is compiled (JIT). */
  latencyRampMs: number;
  latencyWarmupMs: number;
  latencyMs: number;
  isoRate: number;
  isoWarmupMs: number;
  isoMs: number;
  retryEvents: number;
  retryEndpoints: number;
  retryRate: number;
  rateLimitEvents: number;
  orderedEvents: number;
  backlogEvents: number;
  claimPending: number;
  claimFinished: number;
  claimRuns: number;
  peersDeliveries: number;
  /** Runs of each contender's best setting (the median counts); the sweep is only in the full run. */
  peersRuns: number;
  peersSweep: boolean;
  /** Finished deliveries filled over past days for the retention scenario. */
  retentionRows: number;
  /** Events (× 10 endpoints) delivered in each retention phase. */
  retentionEvents: number;
  /** Events per store in the noisy-neighbour throughput phases (100 stores × 10 endpoints). */
  noisyThroughputEvents: number;
  /** Deliveries of each many-stores drain (one store, then 1,000 stores, 10 endpoints each). */
  manyStoresDeliveries: number;
  /** Events (× 10 endpoints) published and drained by the storage scenario. */
  storageEvents: number;
  clientsWarmupMs: number;
  clientsMs: number;
  clientsRounds: number;
}

export const FULL: Sizes = {
  ceilingWarmupMs: 1000,
  ceilingMs: 10_000,
  apiWarmupSec: 2,
  apiSec: 10,
  apiConnections: 50,
  throughputEvents: 10_000, // × 10 endpoints = 100,000 deliveries
  publishFilteredEvents: 5000,
  publishFilteredRounds: 11,
  latencyRate: 500,
  latencyRampMs: 15_000,
  latencyWarmupMs: 2000,
  latencyMs: 20_000,
  isoRate: 100,
  isoWarmupMs: 2000,
  isoMs: 15_000,
  retryEvents: 400,
  retryEndpoints: 5,
  retryRate: 200,
  rateLimitEvents: 3000, // × 9 endpoints
  orderedEvents: 2000,
  backlogEvents: 20_000, // × 10 endpoints = 200,000 deliveries
  claimPending: 10_000,
  claimFinished: 2_000_000,
  claimRuns: 30,
  peersDeliveries: 50_000,
  peersRuns: 3,
  peersSweep: true,
  retentionRows: 2_000_000,
  retentionEvents: 10_000,
  noisyThroughputEvents: 50, // × 1,000 endpoints = 50,000 deliveries
  manyStoresDeliveries: 50_000,
  storageEvents: 5000, // × 10 endpoints = 50,000 deliveries
  clientsWarmupMs: 1000,
  clientsMs: 5000,
  clientsRounds: 3,
};

export const QUICK: Sizes = {
  ceilingWarmupMs: 1000,
  ceilingMs: 2000,
  apiWarmupSec: 0,
  apiSec: 2,
  apiConnections: 50,
  throughputEvents: 1000,
  publishFilteredEvents: 1000,
  publishFilteredRounds: 3,
  latencyRate: 500,
  latencyRampMs: 1000,
  latencyWarmupMs: 500,
  latencyMs: 1500,
  isoRate: 100,
  isoWarmupMs: 300,
  isoMs: 1500,
  retryEvents: 40,
  retryEndpoints: 5,
  retryRate: 200,
  rateLimitEvents: 500,
  orderedEvents: 300,
  backlogEvents: 2000,
  claimPending: 5000,
  claimFinished: 200_000,
  claimRuns: 8,
  peersDeliveries: 5000,
  peersRuns: 1,
  peersSweep: false,
  retentionRows: 200_000,
  retentionEvents: 1000,
  noisyThroughputEvents: 30,
  manyStoresDeliveries: 10_000,
  storageEvents: 1000,
  clientsWarmupMs: 500,
  clientsMs: 1500,
  clientsRounds: 1,
};
