import { ConfigError, loadConfig } from '../../src/config';

describe('configuration', () => {
  it('has defaults for everything, the run worker included', () => {
    expect(loadConfig({}, '/srv')).toMatchObject({
      port: 4000,
      databaseUrl: undefined,
      dataDir: '/srv/.reportql',
      seedDemo: true,
      worker: true,
      workerConcurrency: 256,
      jobLeaseSeconds: 900,
      logLevel: 'info',
    });
  });

  it('reads the worker settings', () => {
    expect(loadConfig({ WORKER: 'off', WORKER_CONCURRENCY: ' 64 ', JOB_LEASE_SECONDS: '120', PORT: '' }, '/srv')).toMatchObject({
      worker: false,
      workerConcurrency: 64,
      jobLeaseSeconds: 120,
      port: 4000,
    });
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
});
