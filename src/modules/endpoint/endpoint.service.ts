import { In, IsNull, type DataSource, type Repository } from 'typeorm';
import type { Embedder } from '../../analytics/embedding/embedder';
import { sizeClass as sizeClassOf } from '../../analytics/groups';
import { paginate, type PageRequest } from '../../db/pagination';
import { lockProject } from '../../db/parents';
import { badInput, conflict, notFound } from '../../domain/errors';
import { redact } from '../../jobs/failure';
import { EGRESS_REFUSALS, portOf } from '../../llm/egress';
import { measureHealth, probeJsonSchema, probeThinkingToggle, type CapabilityProbe, type DiscoveredModel } from '../../llm/probe';
import { Role } from '../api-key/api-key.entity';
import { hasRole, requireRole, type Principal } from '../api-key/principal';
import { MAX_ENDPOINT_TIMEOUT_MS } from '../../llm/types';
import { EndpointConnections } from './endpoint-connections';
import { Endpoint, HealthStatus, type EndpointHealth } from './endpoint.entity';
import type { RefreshEndpointInput, RegisterEndpointInput, UpdateModelInput } from './endpoint.input';
import { Model, SizeClass } from './model.entity';

const PROBE_TIMEOUT_MS = 15_000;

export interface EndpointProbeResult {
  endpoint: Endpoint;
  models: Model[];
  /** what the probe dropped or ignored of the endpoint's answer, in our words */
  warnings: string[];
}

function checkUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw badInput('baseUrl is not a URL', { field: 'baseUrl' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badInput('baseUrl must be http(s)', { field: 'baseUrl' });
  if (url.username || url.password) throw badInput('Put credentials in apiKey, not in baseUrl', { field: 'baseUrl' });
  return url;
}

/** Longest endpoint API key accepted. */
export const MAX_API_KEY_LENGTH = 4096;

/**
 * A key travels in an HTTP header: visible ASCII only. A line break would end the header (or
 * make the request fail with the key in the error), a space or a control character is a paste
 * error. The message never repeats the value.
 */
export function checkSecret(value: string, field: string): void {
  if (value.length > MAX_API_KEY_LENGTH) throw badInput(`${field} must be at most ${MAX_API_KEY_LENGTH} characters`, { field });
  if (!/^[\x21-\x7e]*$/.test(value)) {
    throw badInput(`${field} must be printable ASCII without spaces, line breaks or other control characters`, { field });
  }
}

const aborted = () => badInput('The request was aborted before the endpoint could be recorded', { reason: 'ABORTED' });

/** What a probe said, in our words, with every configured secret taken out in case one got in. */
function probeDetail(probe: CapabilityProbe, secrets: readonly (string | null)[]): string | null {
  return probe.detail === null ? null : redact(probe.detail, secrets);
}

export class EndpointService {
  constructor(
    private readonly dataSource: DataSource,
    readonly connections: EndpointConnections,
  ) {}

  /**
   * The base URL, normalised, and refused when the egress policy refuses its host and port:
   * outside ENDPOINT_ALLOW, link-local, a cloud metadata service, or this server's own ports.
   */
  private async allowedUrl(baseUrl: string): Promise<string> {
    const url = checkUrl(baseUrl);
    const refusal = await this.connections.egress.refusalOf(url.hostname, portOf(url));
    if (refusal === 'NOT_ALLOWED') {
      throw badInput("baseUrl's host is outside this server's egress policy (ENDPOINT_ALLOW)", { field: 'baseUrl', reason: 'EGRESS_DENIED' });
    }
    if (refusal !== null) {
      throw badInput(`baseUrl is refused: ${EGRESS_REFUSALS[refusal].replace(/^the address is /, 'its address is ')}; no endpoint is served there`, {
        field: 'baseUrl',
        reason: 'EGRESS_DENIED',
        refusal,
      });
    }
    return url.toString().replace(/\/+$/, '');
  }

  /**
   * The endpoint's health as `principal` may see it. What a probe found (latency, error codes)
   * tells whether and how something answers at an address; a VIEWER, who cannot register or
   * probe endpoints, sees whether the endpoint is up and when it was checked, nothing more.
   */
  healthShownTo(principal: Principal, endpoint: Endpoint): EndpointHealth {
    const health = endpoint.health;
    return hasRole(principal, endpoint.projectId, Role.EDITOR) ? health : { ...health, latencyMs: null, lastError: null };
  }

  /** The probed capabilities for EDITOR and above; empty for a VIEWER (see {@link healthShownTo}). */
  capabilitiesShownTo(principal: Principal, endpoint: Endpoint): Record<string, unknown> {
    return hasRole(principal, endpoint.projectId, Role.EDITOR) ? endpoint.capabilities : {};
  }

  list(projectId: string, args: PageRequest) {
    const query = this.dataSource.getRepository(Endpoint).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    return paginate(query, args, { column: 'e.created_at', scope: projectId, value: (e) => e.createdAt });
  }

  listModels(projectId: string, args: PageRequest) {
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
  async register(principal: Principal, projectId: string, input: RegisterEndpointInput, signal?: AbortSignal): Promise<EndpointProbeResult> {
    requireRole(principal, projectId, Role.EDITOR, 'Project');
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    if (!Number.isInteger(input.maxConcurrency) || input.maxConcurrency < 1 || input.maxConcurrency > 1024) {
      throw badInput('maxConcurrency must be between 1 and 1024', { field: 'maxConcurrency' });
    }
    if (!Number.isInteger(input.timeoutMs) || input.timeoutMs < 1000 || input.timeoutMs > MAX_ENDPOINT_TIMEOUT_MS) {
      throw badInput(`timeoutMs must be between 1000 and ${MAX_ENDPOINT_TIMEOUT_MS}`, { field: 'timeoutMs' });
    }
    if (input.gpuCount !== null && input.gpuCount !== undefined && (!Number.isInteger(input.gpuCount) || input.gpuCount < 0)) {
      throw badInput('gpuCount must be a non-negative integer', { field: 'gpuCount' });
    }
    if (input.apiKey) checkSecret(input.apiKey, 'apiKey');
    const baseUrl = await this.allowedUrl(input.baseUrl);
    // no endpoint is probed for a project that does not exist
    await lockProject(this.dataSource.manager, projectId);
    const repo = this.dataSource.getRepository(Endpoint);
    if (await repo.findOneBy({ projectId, name })) throw conflict(`An endpoint named "${name}" already exists in this project`);
    const endpoint = repo.create({
      projectId,
      name,
      baseUrl,
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
    const probed = await this.probe(endpoint, input.apiKey ?? null, signal);
    // Nothing is held open while the endpoint is talked to; a client gone by now gets nothing written.
    if (signal?.aborted) throw aborted();
    try {
      return await this.dataSource.transaction(async (manager) => {
        await lockProject(manager, projectId);
        const saved = await manager.getRepository(Endpoint).save(endpoint);
        const models = await this.syncModels(manager.getRepository(Model), saved, probed.models);
        return { endpoint: saved, models, warnings: probed.warnings };
      });
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw conflict(`An endpoint named "${name}" already exists in this project`);
      throw error;
    }
  }

  async refresh(principal: Principal, id: string, input: RefreshEndpointInput, signal?: AbortSignal): Promise<EndpointProbeResult> {
    const endpoint = await this.getEndpoint(principal, id, Role.EDITOR);
    let apiKey: string | null;
    if (input.apiKey !== undefined && input.apiKey !== null) {
      checkSecret(input.apiKey, 'apiKey');
      endpoint.apiKeyEncrypted = input.apiKey === '' ? null : this.connections.seal(input.apiKey);
      apiKey = input.apiKey === '' ? null : input.apiKey;
    } else {
      apiKey = this.connections.apiKeyOf(endpoint);
    }
    await this.allowedUrl(endpoint.baseUrl);
    const probed = await this.probe(endpoint, apiKey, signal);
    if (signal?.aborted) throw aborted();
    return this.dataSource.transaction(async (manager) => {
      const saved = await manager.getRepository(Endpoint).save(endpoint);
      const models = await this.syncModels(manager.getRepository(Model), saved, probed.models, probed.reachable);
      return { endpoint: saved, models, warnings: probed.warnings };
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

  /**
   * GET /models, then (with the first model) the capability probes. Every text recorded is ours:
   * the status and a short reason, with every configured secret redacted in case one got in.
   */
  private async probe(endpoint: Endpoint, apiKey: string | null, signal: AbortSignal | undefined): Promise<{ models: DiscoveredModel[]; reachable: boolean; warnings: string[] }> {
    const secrets = [apiKey];
    const timeoutMs = Math.min(endpoint.timeoutMs, PROBE_TIMEOUT_MS);
    const health = await measureHealth(endpoint.baseUrl, apiKey, timeoutMs, { egress: this.connections.egress, signal, secrets });
    endpoint.checkedAt = health.checkedAt;
    endpoint.healthLatencyMs = Math.round(health.latencyMs);
    if (!health.ok) {
      endpoint.healthStatus = HealthStatus.DOWN;
      endpoint.healthLastError = redact(health.error ?? 'the endpoint could not be reached', secrets);
      return { models: [], reachable: false, warnings: [] };
    }
    endpoint.healthStatus = HealthStatus.UP;
    endpoint.healthLastError = null;
    endpoint.lastSeenAt = health.checkedAt;
    const first = health.models[0];
    if (first && !signal?.aborted) {
      const chat = this.connections.chat({ ...endpoint, timeoutMs } as Endpoint);
      const failed = (): CapabilityProbe => ({ supported: null, detail: 'the probe failed' });
      const [jsonSchema, thinking] = await Promise.all([probeJsonSchema(chat, first.id, signal).catch(failed), probeThinkingToggle(chat, first.id, signal).catch(failed)]);
      const jsonSchemaDetail = probeDetail(jsonSchema, secrets);
      const thinkingToggleDetail = probeDetail(thinking, secrets);
      endpoint.capabilities = {
        jsonSchema: jsonSchema.supported,
        thinkingToggle: thinking.supported,
        probedWith: first.id,
        ...(jsonSchemaDetail ? { jsonSchemaDetail } : {}),
        ...(thinkingToggleDetail ? { thinkingToggleDetail } : {}),
      };
    }
    return { models: health.models, reachable: true, warnings: health.warnings };
  }

  /**
   * New served names become models; names no longer listed stay (runs refer to them), marked
   * unavailable. A few queries whatever the listing's size (it is capped at MAX_LISTED_MODELS),
   * and rows are written only when something changed.
   */
  private async syncModels(repo: Repository<Model>, endpoint: Endpoint, discovered: DiscoveredModel[], reachable = true): Promise<Model[]> {
    const existing = await repo.findBy({ endpointId: endpoint.id });
    const byName = new Map(existing.map((m) => [m.servedName, m]));
    const listed = new Set(discovered.map((d) => d.id));
    const unknown = discovered.filter((d) => !byName.has(d.id)).map((d) => d.id);
    // A model known so far only from imported runs becomes this endpoint's model: one model, its runs kept.
    const imported = unknown.length > 0 ? await repo.findBy({ projectId: endpoint.projectId, endpointId: IsNull(), servedName: In(unknown) }) : [];
    const importedByName = new Map(imported.map((m) => [m.servedName, m]));
    const changed: Model[] = [];
    for (const found of discovered) {
      let model = byName.get(found.id);
      const adopted = model ? undefined : importedByName.get(found.id);
      if (adopted) {
        adopted.endpointId = endpoint.id;
        model = adopted;
        byName.set(found.id, adopted);
      }
      if (model) {
        const maxModelLen = found.maxModelLen ?? model.maxModelLen;
        const hfRepo = model.hfRepo ?? (found.root && found.root !== found.id ? found.root : null);
        if (adopted || !model.available || model.maxModelLen !== maxModelLen || model.hfRepo !== hfRepo) {
          model.available = true;
          model.maxModelLen = maxModelLen;
          model.hfRepo = hfRepo;
          changed.push(model);
        }
      } else {
        const created = repo.create({
          projectId: endpoint.projectId,
          endpointId: endpoint.id,
          servedName: found.id,
          hfRepo: found.root && found.root !== found.id ? found.root : found.id.includes('/') ? found.id : null,
          maxModelLen: found.maxModelLen,
          defaultSampling: {},
          available: true,
        });
        byName.set(found.id, created);
        changed.push(created);
      }
    }
    if (reachable) {
      for (const model of existing) {
        if (!listed.has(model.servedName) && model.available) {
          model.available = false;
          changed.push(model);
        }
      }
    }
    if (changed.length > 0) await repo.save(changed, { chunk: 200 });
    return [...byName.values()].sort((a, b) => a.servedName.localeCompare(b.servedName));
  }
}
