import { ConfigError, defaultStatisticsThreads, loadConfig } from '../../src/config';

describe('configuration', () => {
  it('has defaults for everything, the run worker included', () => {
    expect(loadConfig({}, '/srv')).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: '/srv/.reportql',
      seedDemo: true,
      worker: true,
      workerConcurrency: 256,
      jobLeaseSeconds: 900,
      analyticsRunCacheBytes: 256 * 1024 * 1024,
      endpointAllow: undefined,
      logLevel: 'info',
    });
  });

  it('reads ANALYTICS_RUN_CACHE_MB in megabytes and refuses what is not a whole number', () => {
    expect(loadConfig({ ANALYTICS_RUN_CACHE_MB: '64' }, '/srv').analyticsRunCacheBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ ANALYTICS_RUN_CACHE_MB: '0' }, '/srv').analyticsRunCacheBytes).toBe(0);
    expect(() => loadConfig({ ANALYTICS_RUN_CACHE_MB: '1.5' }, '/srv')).toThrow(ConfigError);
  });

  it('reads ANALYTICS_THREADS, one per core up to 4 when unset, 0 meaning the request thread', () => {
    expect(loadConfig({}, '/srv').analyticsThreads).toBe(defaultStatisticsThreads());
    expect(defaultStatisticsThreads()).toBeGreaterThanOrEqual(1);
    expect(defaultStatisticsThreads()).toBeLessThanOrEqual(4);
    expect(loadConfig({ ANALYTICS_THREADS: '0' }, '/srv').analyticsThreads).toBe(0);
    expect(loadConfig({ ANALYTICS_THREADS: ' 3 ' }, '/srv').analyticsThreads).toBe(3);
    expect(() => loadConfig({ ANALYTICS_THREADS: '65' }, '/srv')).toThrow(/ANALYTICS_THREADS/);
    expect(() => loadConfig({ ANALYTICS_THREADS: '-1' }, '/srv')).toThrow(ConfigError);
  });

  it('reads ENDPOINT_ALLOW into an egress policy, blank meaning unset', async () => {
    expect(loadConfig({ ENDPOINT_ALLOW: '  ' }, '/srv').endpointAllow).toBeUndefined();
    const policy = loadConfig({ ENDPOINT_ALLOW: 'gpu-1.example.org, *.gpu.example.org,10.0.0.0/8, fd00::/8 ,192.0.2.7' }, '/srv').endpointAllow;
    expect(policy?.entries).toEqual(['gpu-1.example.org', '*.gpu.example.org', '10.0.0.0/8', 'fd00::/8', '192.0.2.7']);
    expect(await policy?.allowsHost('a.gpu.example.org')).toBe(true);
    expect(await policy?.allowsHost('10.1.2.3')).toBe(true);
    expect(await policy?.allowsHost('192.0.2.8')).toBe(false);
  });

  it('names the bad ENDPOINT_ALLOW entries', () => {
    let error: unknown;
    try {
      loadConfig({ ENDPOINT_ALLOW: 'ok.example.org,10.0.0.0/33,http://x,*.' }, '/srv');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'ENDPOINT_ALLOW: "10.0.0.0/33" is not a CIDR range; "http://x" is not a hostname, *.suffix, IP address or CIDR range; "*." is not a hostname, *.suffix, IP address or CIDR range',
    ]);
  });

  it('reads the worker settings', () => {
    expect(loadConfig({ WORKER: 'off', WORKER_CONCURRENCY: ' 64 ', JOB_LEASE_SECONDS: '120', PORT: '' }, '/srv')).toMatchObject({
      worker: false,
      workerConcurrency: 64,
      jobLeaseSeconds: 120,
      port: 4000,
    });
  });

  it('reads the rate limits and the request deadline, 0 switching a limit off', () => {
    expect(loadConfig({}, '/srv')).toMatchObject({
      rateLimits: { perKeyPerMinute: 1200, perAddressPerMinute: 2400, authFailuresPerMinute: 20 },
      requestDeadlineMs: 120_000,
      trustProxyHops: 0,
    });
    expect(loadConfig({ RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_PER_ADDRESS: '100', RATE_LIMIT_AUTH_FAILURES: '5', REQUEST_DEADLINE_MS: '30000', TRUST_PROXY_HOPS: '1' }, '/srv')).toMatchObject({
      rateLimits: { perKeyPerMinute: 0, perAddressPerMinute: 100, authFailuresPerMinute: 5 },
      requestDeadlineMs: 30_000,
      trustProxyHops: 1,
    });
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: '10' }, '/srv')).toThrow(/REQUEST_DEADLINE_MS: must be at least 1000/);
    expect(() => loadConfig({ RATE_LIMIT_PER_KEY: '-1' }, '/srv')).toThrow(/RATE_LIMIT_PER_KEY/);
  });

  it('reads the connection, WebSocket and outage bounds, 0 switching a bound off', () => {
    expect(loadConfig({}, '/srv')).toMatchObject({
      connectionLimits: { maxConnections: 1024, maxRequestsInFlight: 128, maxRequestsPerConnection: 1000 },
      webSocketLimits: { perConnection: 100, perKey: 500 },
      databaseOutageSeconds: 30,
    });
    expect(
      loadConfig({ MAX_CONNECTIONS: '0', MAX_REQUESTS_IN_FLIGHT: '8', MAX_REQUESTS_PER_CONNECTION: '0', WS_OPERATIONS_PER_CONNECTION: '3', WS_OPERATIONS_PER_KEY: '0', DATABASE_OUTAGE_SECONDS: '5' }, '/srv'),
    ).toMatchObject({
      connectionLimits: { maxConnections: 0, maxRequestsInFlight: 8, maxRequestsPerConnection: 0 },
      webSocketLimits: { perConnection: 3, perKey: 0 },
      databaseOutageSeconds: 5,
    });
    expect(() => loadConfig({ DATABASE_OUTAGE_SECONDS: '0' }, '/srv')).toThrow(/DATABASE_OUTAGE_SECONDS: must be at least 1/);
    expect(() => loadConfig({ WS_OPERATIONS_PER_CONNECTION: 'many' }, '/srv')).toThrow(/WS_OPERATIONS_PER_CONNECTION/);
  });

  it('names every bad value at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: '70000', WORKER_CONCURRENCY: '0', JOB_LEASE_SECONDS: '5s', WORKER: 'maybe' }, '/srv');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'PORT: must be at most 65535',
      'WORKER: must be one of true/false, 1/0, yes/no, on/off',
      'WORKER_CONCURRENCY: must be at least 1',
      'JOB_LEASE_SECONDS: must be a whole number of seconds',
    ]);
  });

  it('binds 127.0.0.1 unless HOST says otherwise, and refuses what is no address', () => {
    expect(loadConfig({ HOST: '0.0.0.0' }, '/srv').host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: ' [::] ' }, '/srv').host).toBe('::');
    expect(loadConfig({ HOST: 'reportql.internal' }, '/srv').host).toBe('reportql.internal');
    expect(loadConfig({ HOST: '' }, '/srv').host).toBe('127.0.0.1');
    expect(() => loadConfig({ HOST: 'http://0.0.0.0:4000' }, '/srv')).toThrow('HOST: must be an IP address or a host name');
  });

  it('reads CORS_ORIGINS as exact origins, and names what is not one', () => {
    expect(loadConfig({}, '/srv').corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: ' https://app.example.org, http://localhost:5173 ,' }, '/srv').corsOrigins).toEqual(['https://app.example.org', 'http://localhost:5173']);
    let error: unknown;
    try {
      loadConfig({ CORS_ORIGINS: '*,https://app.example.org/ui,ftp://x.example' }, '/srv');
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toHaveLength(3);
    expect((error as ConfigError).problems[0]).toMatch(/^CORS_ORIGINS: "\*" is not an origin/);
  });
});
