import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config';

const ROOT = path.resolve(__dirname, '../../..');

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas?: number };
}

const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

/** What Compose makes of `${VAR:?…}` and `${VAR:-default}` with the given variables set. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_, name: string, kind: string | undefined, rest: string) => {
    if (vars[name] !== undefined) return vars[name]!;
    if (kind === '?') throw new Error(`${name} is required: ${rest}`);
    return kind === '-' ? rest : '';
  });
}

/** The variables of the README's configuration table. */
function documentedVariables(): Set<string> {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Using the API'));
  return new Set([...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!));
}

/** ENV of the Dockerfile's last stage. */
function imageEnv(): Record<string, string> {
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const match of runtime.matchAll(/^ENV ((?:[^\n]*\\\n)*[^\n]*)/gm)) {
    for (const pair of match[1]!.replace(/\\\n/g, ' ').trim().split(/\s+/)) {
      const [key, value] = pair.split('=');
      env[key!] = value!;
    }
  }
  return env;
}

const vars = { POSTGRES_PASSWORD: 'compose-test-password', SECRET_KEY: 'compose-test-secret-key-0123456789' };

describe('docker-compose.yml', () => {
  const environmentOf = (name: string) => {
    const service = compose.services[name]!;
    return { ...imageEnv(), ...Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)])) };
  };

  it('has PostgreSQL, one API server without a worker and two workers from the same image', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['postgres', 'server', 'worker']);
    expect(compose.services.server!.command).toEqual(['node', 'dist/src/main.js']);
    expect(compose.services.worker!.command).toEqual(['node', 'dist/src/worker.js']);
    expect(compose.services.worker!.deploy?.replicas).toBe(2);
    expect(compose.services.worker!.depends_on?.server?.condition).toBe('service_healthy');
    for (const command of [compose.services.server!.command!, compose.services.worker!.command!]) {
      expect(existsSync(path.join(ROOT, command[1]!.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toBe(true);
    }
  });

  it('gives the server and the workers a configuration the server accepts, sharing database and secret key', () => {
    const server = loadConfig(environmentOf('server'), '/app');
    const worker = loadConfig(environmentOf('worker'), '/app');
    expect(server).toMatchObject({ worker: false, host: '0.0.0.0', port: 4000, adminApiKey: undefined, corsOrigins: [], metricsToken: undefined, seedDemo: true });
    expect(server.databaseUrl).toBe('postgresql://reportql:compose-test-password@postgres:5432/reportql');
    expect(worker.databaseUrl).toBe(server.databaseUrl);
    expect(worker.secretKey).toBe(vars.SECRET_KEY);
    expect(server.secretKey).toBe(vars.SECRET_KEY);
    expect(server.dataDir).toBe('/data');
  });

  it('refuses to start without POSTGRES_PASSWORD or SECRET_KEY', () => {
    expect(() => interpolate(String(compose.services.server!.environment!.SECRET_KEY), {})).toThrow(/SECRET_KEY is required/);
    expect(() => interpolate(String(compose.services.server!.environment!.DATABASE_URL), {})).toThrow(/POSTGRES_PASSWORD is required/);
  });

  it('sets only variables the README documents', () => {
    const documented = documentedVariables();
    const used = new Set([...Object.keys(compose.services.server!.environment!), ...Object.keys(compose.services.worker!.environment!), ...Object.keys(imageEnv())]);
    used.delete('NODE_ENV');
    expect([...used].filter((name) => !documented.has(name))).toEqual([]);
  });
});

describe('Dockerfile', () => {
  it('runs as a non-root user, checks /readyz and starts the server', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\\\n\s+CMD \[.*\/readyz/m);
    expect(runtime).toMatch(/^CMD \["node", "dist\/src\/main\.js"\]$/m);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev/m);
  });
});
