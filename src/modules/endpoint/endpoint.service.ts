import { IsNull, type DataSource } from 'typeorm';
import type { Embedder } from '../../analytics/embedding/embedder';
import { sizeClass as sizeClassOf } from '../../analytics/groups';
import type { PageArgs } from '../../graphql/connection';
import { paginate } from '../../graphql/connection';
import { badInput, conflict, notFound } from '../../graphql/errors';
import { measureHealth, probeJsonSchema, probeThinkingToggle, type DiscoveredModel } from '../../llm/probe';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import { EndpointConnections } from './endpoint-connections';
import { Endpoint, HealthStatus } from './endpoint.entity';
import type { RefreshEndpointInput, RegisterEndpointInput, UpdateModelInput } from './endpoint.input';
import { Model, SizeClass } from './model.entity';

const PROBE_TIMEOUT_MS = 15_000;

function checkUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw badInput('baseUrl is not a URL', { field: 'baseUrl' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badInput('baseUrl must be http(s)', { field: 'baseUrl' });
  if (url.username || url.password) throw badInput('Put credentials in apiKey, not in baseUrl', { field: 'baseUrl' });
  return url.toString().replace(/\/+$/, '');
}

export class EndpointService {
  constructor(
    private readonly dataSource: DataSource,
    readonly connections: EndpointConnections,
  ) {}

  list(projectId: string, args: PageArgs) {
    const query = this.dataSource.getRepository(Endpoint).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    return paginate(query, args, { column: 'e.created_at', scope: projectId, value: (e) => e.createdAt });
  }

  listModels(projectId: string, args: PageArgs) {
    const query = this.dataSource.getRepository(Model).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    return paginate(query, args, { column: 'e.created_at', scope: projectId, value: (m) => m.createdAt });
  }

  async getEndpoint(principal: Principal, id: string, minimum: Role = Role.VIEWER): Promise<Endpoint> {
    const endpoint = await this.dataSource.getRepository(Endpoint).findOneBy({ id });
    if (!endpoint) throw notFound('Endpoint');
    requireRole(principal, endpoint.projectId, minimum, 'Endpoint');
    return endpoint;
  }

  async getModel(principal: Principal, id: string, minimum: Role = Role.VIEWER): Promise<Model> {
    const model = await this.dataSource.getRepository(Model).findOneBy({ id });
    if (!model) throw notFound('Model');
    requireRole(principal, model.projectId, minimum, 'Model');
    return model;
  }

  /**
   * Registers a server and probes it: GET /models for the served models, then constrained
   * decoding and the thinking switch with the first model. An unreachable server is still
   * registered (health DOWN, the error recorded) so it can be refreshed once it is up.
   */
  async register(principal: Principal, projectId: string, input: RegisterEndpointInput): Promise<{ endpoint: Endpoint; models: Model[] }> {
    requireRole(principal, projectId, Role.EDITOR, 'Project');
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    if (!Number.isInteger(input.maxConcurrency) || input.maxConcurrency < 1 || input.maxConcurrency > 1024) {
      throw badInput('maxConcurrency must be between 1 and 1024', { field: 'maxConcurrency' });
    }
    if (!Number.isInteger(input.timeoutMs) || input.timeoutMs < 1000 || input.timeoutMs > 3_600_000) {
      throw badInput('timeoutMs must be between 1000 and 3600000', { field: 'timeoutMs' });
    }
    if (input.gpuCount !== null && input.gpuCount !== undefined && (!Number.isInteger(input.gpuCount) || input.gpuCount < 0)) {
      throw badInput('gpuCount must be a non-negative integer', { field: 'gpuCount' });
    }
    const repo = this.dataSource.getRepository(Endpoint);
    if (await repo.findOneBy({ projectId, name })) throw conflict(`An endpoint named "${name}" already exists in this project`);
    const endpoint = repo.create({
      projectId,
      name,
      baseUrl: checkUrl(input.baseUrl),
      kind: input.kind,
      gpuCount: input.gpuCount ?? null,
      hardware: input.hardware?.trim() || null,
      maxConcurrency: input.maxConcurrency,
      timeoutMs: input.timeoutMs,
      apiKeyEncrypted: input.apiKey ? this.connections.seal(input.apiKey) : null,
      capabilities: {},
      healthStatus: HealthStatus.UNKNOWN,
      healthLatencyMs: null,
      healthLastError: null,
      lastSeenAt: null,
      checkedAt: null,
    });
    const probed = await this.probe(endpoint);
    try {
      return await this.dataSource.transaction(async (manager) => {
        const saved = await manager.getRepository(Endpoint).save(endpoint);
        const models = await this.syncModels(manager.getRepository(Model), saved, probed.models);
        return { endpoint: saved, models };
      });
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw conflict(`An endpoint named "${name}" already exists in this project`);
      throw error;
    }
  }

  async refresh(principal: Principal, id: string, input: RefreshEndpointInput): Promise<{ endpoint: Endpoint; models: Model[] }> {
    const endpoint = await this.getEndpoint(principal, id, Role.EDITOR);
    if (input.apiKey !== undefined && input.apiKey !== null) {
      endpoint.apiKeyEncrypted = input.apiKey === '' ? null : this.connections.seal(input.apiKey);
    }
    const probed = await this.probe(endpoint);
    return this.dataSource.transaction(async (manager) => {
      const saved = await manager.getRepository(Endpoint).save(endpoint);
      const models = await this.syncModels(manager.getRepository(Model), saved, probed.models, probed.reachable);
      return { endpoint: saved, models };
    });
  }

  async updateModel(principal: Principal, id: string, input: UpdateModelInput): Promise<Model> {
    const model = await this.getModel(principal, id, Role.EDITOR);
    for (const [field, value] of [
      ['parameterCountB', input.parameterCountB],
      ['activeParameterCountB', input.activeParameterCountB],
    ] as const) {
      if (value !== undefined && value !== null && !(value > 0 && Number.isFinite(value))) throw badInput(`${field} must be a positive number`, { field });
    }
    if (input.hfRepo !== undefined) model.hfRepo = input.hfRepo?.trim() || null;
    if (input.family !== undefined) model.family = input.family?.trim() || null;
    if (input.parameterCountB !== undefined) model.parameterCountB = input.parameterCountB;
    if (input.activeParameterCountB !== undefined) model.activeParameterCountB = input.activeParameterCountB;
    if (input.specialisation !== undefined) model.specialisation = input.specialisation;
    if (input.quantisation !== undefined) model.quantisation = input.quantisation?.trim() || null;
    if (input.supportsThinking !== undefined) model.supportsThinking = input.supportsThinking;
    if (input.defaultSampling !== undefined) model.defaultSampling = { ...(input.defaultSampling ?? {}) };
    if (input.sizeClass !== undefined && input.sizeClass !== null) model.sizeClass = input.sizeClass;
    else if (input.parameterCountB !== undefined) model.sizeClass = model.parameterCountB ? (sizeClassOf(model.parameterCountB) as SizeClass) : null;
    return this.dataSource.getRepository(Model).save(model);
  }

  /** An Embedder over a registered model's /v1/embeddings, for the similarity metrics. */
  async embedder(principal: Principal, modelId: string): Promise<Embedder> {
    const model = await this.getModel(principal, modelId);
    if (!model.endpointId) throw badInput('This model has no endpoint to compute embeddings with', { field: 'embeddingModelId' });
    const endpoint = await this.getEndpoint(principal, model.endpointId);
    const embed = this.connections.embed(endpoint, model.servedName);
    return { id: { provider: `${endpoint.kind.toLowerCase()}:${endpoint.baseUrl}`, model: model.servedName }, embed };
  }

  private async probe(endpoint: Endpoint): Promise<{ models: DiscoveredModel[]; reachable: boolean }> {
    const health = await measureHealth(endpoint.baseUrl, this.connections.apiKeyOf(endpoint), Math.min(endpoint.timeoutMs, PROBE_TIMEOUT_MS));
    endpoint.checkedAt = health.checkedAt;
    endpoint.healthLatencyMs = Math.round(health.latencyMs);
    if (!health.ok) {
      endpoint.healthStatus = HealthStatus.DOWN;
      endpoint.healthLastError = health.error;
      return { models: [], reachable: false };
    }
    endpoint.healthStatus = HealthStatus.UP;
    endpoint.healthLastError = null;
    endpoint.lastSeenAt = health.checkedAt;
    const first = health.models[0];
    if (first) {
      const chat = this.connections.chat({ ...endpoint, timeoutMs: Math.min(endpoint.timeoutMs, PROBE_TIMEOUT_MS) } as Endpoint);
      const [jsonSchema, thinking] = await Promise.all([
        probeJsonSchema(chat, first.id).catch((error: unknown) => ({ supported: null, detail: String(error) })),
        probeThinkingToggle(chat, first.id).catch((error: unknown) => ({ supported: null, detail: String(error) })),
      ]);
      endpoint.capabilities = {
        jsonSchema: jsonSchema.supported,
        thinkingToggle: thinking.supported,
        probedWith: first.id,
        ...(jsonSchema.detail ? { jsonSchemaDetail: jsonSchema.detail } : {}),
        ...(thinking.detail ? { thinkingToggleDetail: thinking.detail } : {}),
      };
    }
    return { models: health.models, reachable: true };
  }

  /** New served names become models; names no longer listed stay (runs refer to them), marked unavailable. */
  private async syncModels(repo: import('typeorm').Repository<Model>, endpoint: Endpoint, discovered: DiscoveredModel[], reachable = true): Promise<Model[]> {
    const existing = await repo.findBy({ endpointId: endpoint.id });
    const byName = new Map(existing.map((m) => [m.servedName, m]));
    const listed = new Set(discovered.map((d) => d.id));
    for (const found of discovered) {
      let model = byName.get(found.id);
      if (!model) {
        // A model known so far only from imported runs becomes this endpoint's model: one model, its runs kept.
        const imported = await repo.findOneBy({ projectId: endpoint.projectId, endpointId: IsNull(), servedName: found.id });
        if (imported) {
          imported.endpointId = endpoint.id;
          model = imported;
          byName.set(found.id, imported);
        }
      }
      if (model) {
        model.available = true;
        model.maxModelLen = found.maxModelLen ?? model.maxModelLen;
        model.hfRepo = model.hfRepo ?? (found.root && found.root !== found.id ? found.root : null);
        await repo.save(model);
      } else {
        byName.set(
          found.id,
          await repo.save(
            repo.create({
              projectId: endpoint.projectId,
              endpointId: endpoint.id,
              servedName: found.id,
              hfRepo: found.root && found.root !== found.id ? found.root : found.id.includes('/') ? found.id : null,
              maxModelLen: found.maxModelLen,
              defaultSampling: {},
              available: true,
            }),
          ),
        );
      }
    }
    if (reachable) {
      for (const model of existing) {
        if (!listed.has(model.servedName) && model.available) {
          model.available = false;
          await repo.save(model);
        }
      }
    }
    return [...byName.values()].sort((a, b) => a.servedName.localeCompare(b.servedName));
  }
}
