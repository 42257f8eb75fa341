import { ConfigError, loadConfig } from './app-config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      deliveryTimeoutMs: 10_000,
      retryScheduleMs: [0, 1000, 4000],
      allowHttpUrls: true,
      allowPrivateNetworks: true,
      docsUrl: 'http://localhost:3000/docs',
      role: 'all',
      serviceName: 'Hookline',
      leaseMarginMs: 30_000,
      retryJitter: 0.1,
      retryAfterMaxMs: 3_600_000,
      signatureHeaders: { seed: true, standard: true },
      maxWebhooksPerStore: 100,
      retentionDays: 30,
      endpointDisableAfterMs: 5 * 86_400_000,
      endpointDisableMinFailures: 10,
      publicUrl: 'http://localhost:3000',
      portalFrameAncestors: [],
      maxAttemptsPerDelivery: 100,
    });
    expect(config.dataDir).toMatch(/\.data$/);
  });

  it('parses typed values', () => {
    const config = loadConfig({
      PORT: '8080',
      RETRY_SCHEDULE_MS: ' 0, 500 ,2000,10000 ',
      ALLOW_HTTP_URLS: 'false',
      ALLOW_PRIVATE_NETWORKS: 'FALSE',
      ROLE: 'worker',
      DATABASE_URL: 'postgres://u:p@db:5432/hookline',
      MAX_WEBHOOKS_PER_STORE: '5',
      RETENTION_DAYS: '0',
    });
    expect(config.port).toBe(8080);
    expect(config.retentionDays).toBe(0);
    expect(config.maxWebhooksPerStore).toBe(5);
    expect(config.retryScheduleMs).toEqual([0, 500, 2000, 10000]);
    expect(config.allowHttpUrls).toBe(false);
    expect(config.allowPrivateNetworks).toBe(false);
    expect(config.runsApi).toBe(false);
    expect(config.runsWorker).toBe(true);
  });

  it('reads the replay bounds and MAX_DELIVERY_AGE with its unit', () => {
    expect(loadConfig({})).toMatchObject({ maxReplayDeliveries: 10_000, replayTimeoutMs: 30_000, maxDeliveryAgeMs: 7 * 86_400_000 });
    expect(loadConfig({ MAX_REPLAY_DELIVERIES: '5', REPLAY_TIMEOUT_MS: '250', MAX_DELIVERY_AGE: '6s' })).toMatchObject({
      maxReplayDeliveries: 5,
      replayTimeoutMs: 250,
      maxDeliveryAgeMs: 6_000,
    });
    expect(problemsOf({ MAX_REPLAY_DELIVERIES: '0', MAX_DELIVERY_AGE: 'a week' })).toEqual([
      'MAX_REPLAY_DELIVERIES must be an integer from 1 to 1000000',
      'MAX_DELIVERY_AGE must be a duration (a number with ms, s, m, h or d, or bare ms) from 1s to 365d',
    ]);
  });

  it('refuses a MAX_DELIVERY_AGE shorter than the retry schedule, saying how long the schedule is', () => {
    expect(loadConfig({ MAX_DELIVERY_AGE: '5s' }).maxDeliveryAgeMs).toBe(5_000);
    expect(problemsOf({ MAX_DELIVERY_AGE: '4s' })).toEqual([
      'MAX_DELIVERY_AGE (4s) must be at least the 5s that RETRY_SCHEDULE_MS adds up to',
    ]);
    expect(problemsOf({ MAX_DELIVERY_AGE: '1d', RETRY_SCHEDULE_MS: '0,12h,12h,1h' })).toEqual([
      'MAX_DELIVERY_AGE (1d) must be at least the 25h that RETRY_SCHEDULE_MS adds up to',
    ]);
  });

  it('closes http:// and private networks by default in production, and requires an encryption key there', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual(['SECRET_ENCRYPTION_KEY is required when NODE_ENV=production']);
    const config = loadConfig({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') });
    expect(config.allowHttpUrls).toBe(false);
    expect(config.allowPrivateNetworks).toBe(false);
    expect(config.secretEncryptionKey).toHaveLength(32);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DELIVERY_TIMEOUT_MS', '-5'],
    ['DELIVERY_TIMEOUT_MS', '1.5'],
    ['RETRY_SCHEDULE_MS', '0,-1s,4000'],
    ['RETRY_SCHEDULE_MS', ','],
    ['ALLOW_HTTP_URLS', 'maybe'],
    ['ALLOW_PRIVATE_NETWORKS', '2'],
    ['ROLE', 'scheduler'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DOCS_URL', 'not a url'],
    ['SECRET_ENCRYPTION_KEY', 'too-short'],
    ['ADMIN_API_KEY', 'short'],
    ['NODE_ENV', 'staging'],
    ['LOG_LEVEL', 'verbose'],
    ['LEASE_MARGIN_MS', '100'],
    ['MAX_WEBHOOKS_PER_STORE', '0'],
    ['MAX_WEBHOOKS_PER_STORE', 'lots'],
    ['RETENTION_DAYS', '-1'],
    ['RETENTION_DAYS', '7.5'],
    ['PUBLIC_URL', 'hooks.example.com'],
    ['PUBLIC_URL', 'ftp://hooks.example.com'],
    ['PUBLIC_URL', 'https://hooks.example.com/?x=1'],
    ['PORTAL_FRAME_ANCESTORS', 'https://admin.example.com/pages'],
    ['MAX_ATTEMPTS_PER_DELIVERY', '0'],
    ['MAX_ATTEMPTS_PER_DELIVERY', 'many'],
    ['EGRESS_PROXY_URL', 'https://proxy.internal:3128'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
  ])('rejects %s=%j with a message naming the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
  });

  it('gives a store a quarter of DISPATCH_CONCURRENCY unless STORE_CONCURRENCY says otherwise, never more than all', () => {
    expect(loadConfig({}).storeConcurrency).toBe(128);
    expect(loadConfig({ DISPATCH_CONCURRENCY: '2' }).storeConcurrency).toBe(1);
    expect(loadConfig({ STORE_CONCURRENCY: '300' }).storeConcurrency).toBe(300);
    expect(loadConfig({ DISPATCH_CONCURRENCY: '64', STORE_CONCURRENCY: '100' }).storeConcurrency).toBe(64);
    expect(() => loadConfig({ STORE_CONCURRENCY: '0' })).toThrow('STORE_CONCURRENCY must be an integer from 1 to 10000');
  });

  it('reports every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'x', ROLE: 'y' });
    expect(problems.join('\n')).toMatch(/PORT[\s\S]*ROLE|ROLE[\s\S]*PORT/);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '  ' }).port).toBe(3000);
  });

  it('reads long retry schedules with units, the jitter and the signature header sets', () => {
    const config = loadConfig({ RETRY_SCHEDULE_MS: '0,5s,5m,30m,2h,5h,10h,10h', RETRY_JITTER: '0.25', SIGNATURE_HEADERS: 'standard' });
    expect(config.retryScheduleMs).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(config.retryJitter).toBe(0.25);
    expect(config.signatureHeaders).toEqual({ seed: false, standard: true });
  });

  it('stops on a bad schedule, jitter or header set, naming the variable', () => {
    expect(problemsOf({ RETRY_SCHEDULE_MS: '0,5 minutes' })).toEqual([
      'RETRY_SCHEDULE_MS has entries that are not durations (a number with ms, s, m, h or d, or bare ms): "5 minutes"',
    ]);
    expect(problemsOf({ RETRY_SCHEDULE_MS: '1s,2s' })).toEqual([
      'RETRY_SCHEDULE_MS must start with 0 (the first attempt goes out at once)',
    ]);
    expect(problemsOf({ RETRY_SCHEDULE_MS: '0,8d' })).toEqual(['RETRY_SCHEDULE_MS must add up to at most 7 days']);
    expect(problemsOf({ RETRY_JITTER: '0.6' })).toEqual(['RETRY_JITTER must be a number from 0 to 0.5']);
    expect(problemsOf({ RETRY_JITTER: 'lots' })).toEqual(['RETRY_JITTER must be a number from 0 to 0.5']);
    expect(problemsOf({ SIGNATURE_HEADERS: 'svix' })).toEqual(['SIGNATURE_HEADERS must be seed, standard or seed,standard']);
  });

  it('reads the endpoint disabling thresholds with units, and stops on bad ones', () => {
    const config = loadConfig({ ENDPOINT_DISABLE_AFTER_MS: '12h', ENDPOINT_DISABLE_MIN_FAILURES: '3' });
    expect(config.endpointDisableAfterMs).toBe(12 * 3_600_000);
    expect(config.endpointDisableMinFailures).toBe(3);
    expect(loadConfig({ ENDPOINT_DISABLE_AFTER_MS: '1500' }).endpointDisableAfterMs).toBe(1500);
    expect(problemsOf({ ENDPOINT_DISABLE_AFTER_MS: 'soon', ENDPOINT_DISABLE_MIN_FAILURES: '0' })).toEqual([
      'ENDPOINT_DISABLE_AFTER_MS must be a duration (a number with ms, s, m, h or d, or bare ms) from 1s to 365d',
      'ENDPOINT_DISABLE_MIN_FAILURES must be an integer from 1 to 1000000',
    ]);
  });

  it('takes PUBLIC_URL as given, without a trailing slash, and derives its default from PORT', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://Hooks.Example.com/' }).publicUrl).toBe('https://hooks.example.com');
    expect(loadConfig({ PUBLIC_URL: 'https://platform.example/hookline/' }).publicUrl).toBe('https://platform.example/hookline');
  });

  it('reads tracing and the egress proxy, both off by default', () => {
    expect(loadConfig({})).toMatchObject({ tracing: undefined, egressProxy: undefined });
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', EGRESS_PROXY_URL: 'http://proxy.internal:3128' });
    expect(config.tracing?.url).toBe('http://collector:4318/v1/traces');
    expect(config.egressProxy).toEqual({ origin: 'http://proxy.internal:3128', host: 'proxy.internal', port: 3128 });
  });

  it('wants MAX_ATTEMPTS_PER_DELIVERY to hold at least one whole retry schedule', () => {
    expect(loadConfig({ MAX_ATTEMPTS_PER_DELIVERY: '3', RETRY_SCHEDULE_MS: '0,1s,2s' }).maxAttemptsPerDelivery).toBe(3);
    expect(problemsOf({ MAX_ATTEMPTS_PER_DELIVERY: '2', RETRY_SCHEDULE_MS: '0,1s,2s' })).toEqual([
      'MAX_ATTEMPTS_PER_DELIVERY (2) must be at least the 3 attempts of RETRY_SCHEDULE_MS',
    ]);
  });
});
