import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import {
  getNamedType,
  isObjectType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import type { AnalyticsCache } from '../modules/scoring/analytics-cache';
import { AuditRecorder, type AuditService, type ReadCategory } from '../modules/audit/audit.service';
import type { Principal } from '../modules/api-key/principal';
import type { GraphQLContext } from './context';

/**
 * Objects whose rows move their project's revision on when they change (the analytics-change
 * triggers of migration 1764460000000: annotations, annotators, predictions, runs, variables,
 * use cases, reports, models). Every field of theirs may be answered from the cache, but for
 * the ones below that read something else.
 */
export const COVERED_NODES: ReadonlySet<string> = new Set(['UseCase', 'Variable', 'Run', 'Prediction', 'Report', 'Model', 'Annotation', 'Annotator']);

/** Fields of covered objects whose value depends on the clock or on another table. */
export const UNCOVERED_FIELDS: ReadonlySet<string> = new Set([
  'UseCase.exportConfig', // includes the prompts
  'Run.progress', // elapsed and remaining time
  'Run.telemetry', // the endpoint's metrics
  'Model.available', // the endpoint's health
]);

/**
 * Fields of covered objects that are no column of their own row and are covered all the same:
 * they read covered rows, compute from them, or lead to objects whose own fields decide. With
 * the columns and UNCOVERED_FIELDS they are every field of a covered object; a test walks the
 * schema, so a new field of a covered object is decided here or in UNCOVERED_FIELDS when it is
 * added.
 */
export const DERIVED_COVERED_FIELDS: ReadonlySet<string> = new Set([
  // covered rows
  'UseCase.variables',
  'UseCase.runs',
  'UseCase.missingTokens',
  'Run.useCase',
  'Run.model',
  'Run.predictions',
  'Run.usage',
  'Prediction.report',
  'Prediction.fields',
  'Report.annotations',
  'Annotation.annotator',
  'Annotation.variable',
  // objects whose own fields decide (Dataset, Prompt and Endpoint answer little from the cache)
  'UseCase.datasets',
  'UseCase.prompts',
  'Run.dataset',
  'Run.prompt',
  'Model.endpoint',
  // statistics of covered rows
  'UseCase.leaderboard',
  'UseCase.leaderboardChart',
  'UseCase.heatmapChart',
  'UseCase.varianceDecomposition',
  'Run.scores',
  'Run.comparison',
]);

/** Node types whose rows do not move the revision on and that have no statistics: only their id is covered. */
export const ID_ONLY_NODES: ReadonlySet<string> = new Set(['ApiKey', 'Endpoint', 'Prompt', 'Experiment', 'BackgroundTask']);

/**
 * Objects whose own rows do not move the revision on: only their id and their statistics (which
 * are computed from covered rows) may be answered from the cache.
 */
export const PARTLY_COVERED: Readonly<Record<string, ReadonlySet<string>>> = {
  Project: new Set(['id', 'consensusRanking', 'contrast', 'groupSummary', 'strategyEffects', 'stratifiedResults']),
  Dataset: new Set(['id', 'annotators', 'referenceAnnotator', 'reportCount', 'reports', 'chanceCorrectedAgreement', 'interRaterAgreement']),
};

function isNodeType(schema: GraphQLSchema, name: string): boolean {
  const type = schema.getType(name);
  return isObjectType(type) && type.getInterfaces().some((i) => i.name === 'Node');
}

/**
 * Whether a field's value is fixed by its project's revision (and the caller's access): then an
 * answer made only of such fields is the same until the revision moves on.
 */
export function revisionCovers(schema: GraphQLSchema, parent: string, field: string): boolean {
  // On the Node interface, __typename names whatever object the id is: see `coveredObjects`.
  if (field === '__typename') return true;
  if (field.startsWith('__')) return false;
  if (parent === schema.getQueryType()?.name) return field === 'node' || field === 'nodes';
  if (parent === schema.getMutationType()?.name || parent === schema.getSubscriptionType()?.name) return false;
  if (COVERED_NODES.has(parent)) return !UNCOVERED_FIELDS.has(`${parent}.${field}`);
  const partly = PARTLY_COVERED[parent];
  if (partly) return partly.has(field);
  if (ID_ONLY_NODES.has(parent) || isNodeType(schema, parent)) return field === 'id';
  // Lists of objects whose rows do not move the revision on (their count, their pages) are not covered.
  const type = schema.getType(parent);
  if (isObjectType(type) && (parent.endsWith('Connection') || parent.endsWith('Edge'))) {
    const node = type.getFields()['node'] ?? type.getFields()['edges'];
    const item = node ? getNamedType(node.type) : undefined;
    const inner = item && isObjectType(item) && item.name.endsWith('Edge') ? item.getFields()['node'] : undefined;
    const nodeType = inner ? getNamedType(inner.type).name : item?.name;
    return nodeType === undefined || COVERED_NODES.has(nodeType) || !isNodeType(schema, nodeType);
  }
  // Abstract parents (the Node interface) answer whatever object is behind the id.
  return isObjectType(type);
}

/** A query document whose every field is covered by the revision (see `revisionCovers`). */
export function cacheableDocument(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): boolean {
  if (operation.operation !== 'query') return false;
  const typeInfo = new TypeInfo(schema);
  let cacheable = true;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node, _key, siblings) {
        const parent = typeInfo.getParentType();
        // The id of whatever object node(id:) names, next to its own (unaliased) __typename,
        // which `coveredObjects` checks before the answer is kept.
        const idOfNode =
          parent !== null &&
          !isObjectType(parent) &&
          node.name.value === 'id' &&
          Array.isArray(siblings) &&
          (siblings as readonly SelectionNode[]).some((s) => s.kind === Kind.FIELD && s.name.value === '__typename' && !s.alias);
        if (!parent || (!idOfNode && !revisionCovers(schema, parent.name, node.name.value))) {
          cacheable = false;
          return false;
        }
        return undefined;
      },
    }),
  );
  return cacheable;
}

/**
 * Whether every object `node(id:)` / `nodes(ids:)` answered with its `__typename` is one whose
 * rows move the revision on (an uncovered object, e.g. a prompt, can be deleted without it).
 */
export function coveredObjects(data: Record<string, unknown>): boolean {
  const covered = (value: unknown): boolean => {
    if (Array.isArray(value)) return value.every(covered);
    if (typeof value !== 'object' || value === null) return true;
    const type = (value as { __typename?: unknown }).__typename;
    return type === undefined || COVERED_NODES.has(String(type));
  };
  return Object.values(data).every(covered);
}

/** The audit log's reads of one request, kept to be recorded again when its answer is reused. */
export class ReplayableAuditRecorder extends AuditRecorder {
  readonly seen: [ReadCategory, string | null | undefined][] = [];

  constructor(service: AuditService, principal: Principal, transport: 'HTTP' | 'WEBSOCKET') {
    super(service, principal, transport);
  }

  override read(category: ReadCategory, projectId: string | null | undefined): void {
    this.seen.push([category, projectId]);
    super.read(category, projectId);
  }
}

/**
 * Revision lookups batched per project: at most one lookup per project is in flight, and a
 * caller only ever gets the answer of a lookup that started after it asked (a write committed
 * before a request arrived is always seen).
 */
export function batchedRevisions(lookup: (projectId: string) => Promise<string>): (projectId: string) => Promise<string> {
  const running = new Map<string, Promise<string>>();
  const next = new Map<string, Promise<string>>();
  const start = (projectId: string): Promise<string> => {
    const pending = lookup(projectId).finally(() => {
      if (running.get(projectId) === pending) running.delete(projectId);
    });
    running.set(projectId, pending);
    return pending;
  };
  return (projectId) => {
    const current = running.get(projectId);
    if (!current) return start(projectId);
    let queued = next.get(projectId);
    if (!queued) {
      queued = current
        .catch(() => undefined)
        .then(() => {
          next.delete(projectId);
          return start(projectId);
        });
      next.set(projectId, queued);
    }
    return queued;
  };
}

/**
 * A project's revision as the analytics cache sees it: the one place the response cache learns
 * of revisions. A revision the cache knows (learnt by notification) costs no query; the others
 * are looked up batched.
 */
export function analyticsRevisions(analytics: AnalyticsCache): (projectId: string) => Promise<string> {
  const lookup = batchedRevisions((projectId) => analytics.revision(projectId));
  return (projectId) => {
    const known = analytics.currentRevision(projectId);
    return known === undefined ? lookup(projectId) : Promise.resolve(known);
  };
}

interface Entry {
  data: Record<string, unknown>;
  reads: [ReadCategory, string | null | undefined][];
  bytes: number;
}

export interface ResponseCacheOptions {
  /** The project's revision: whatever changes an answer's inputs moves it on. */
  revision: (projectId: string) => Promise<string>;
  /** Most answers kept (default 2000). */
  capacity?: number;
  /** Most bytes of serialised answers kept (default 64 MB); a larger answer is not kept. */
  maxBytes?: number;
}

/**
 * Answers of unchanged queries, reused: keyed by the project's revision, the caller's access
 * (project, role), the document and its variables, and kept only for documents every field of
 * which is fixed by the revision (statistics, runs, predictions, reports, annotations). The
 * reads of patient data an answer holds are recorded in the audit log again each time it is
 * served. Answers with errors, and answers to server admin keys (which see every project), are
 * not kept.
 */
export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private readonly documents = new WeakMap<DocumentNode, boolean>();
  private bytes = 0;
  private readonly capacity: number;
  private readonly maxBytes: number;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly options: ResponseCacheOptions,
  ) {
    this.capacity = options.capacity ?? 2000;
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  }

  get size(): number {
    return this.entries.size;
  }

  plugin(): ApolloServerPlugin<GraphQLContext> {
    const cache = this;
    return {
      async requestDidStart() {
        let key: string | undefined;
        return {
          async responseForOperation(request) {
            key = await cache.keyOf(request);
            if (key === undefined) return null;
            const hit = cache.entries.get(key);
            if (!hit) return null;
            cache.entries.delete(key);
            cache.entries.set(key, hit);
            for (const [category, projectId] of hit.reads) request.contextValue.audit?.read(category, projectId);
            // The cached object is never changed; each answer gets its own top level.
            return { http: request.response.http, body: { kind: 'single', singleResult: { data: { ...hit.data } } } };
          },
          async willSendResponse(request) {
            if (key === undefined || cache.entries.has(key)) return;
            const body = request.response.body;
            if (body.kind !== 'single' || body.singleResult.errors || !body.singleResult.data) return;
            if (!coveredObjects(body.singleResult.data)) return;
            const status = request.response.http.status;
            if (status !== undefined && status !== 200) return;
            const audit = request.contextValue.audit;
            const reads = audit instanceof ReplayableAuditRecorder ? audit.seen : audit ? undefined : [];
            if (!reads) return;
            cache.store(key, body.singleResult.data, reads);
          },
        };
      },
    };
  }

  private async keyOf(request: GraphQLRequestContext<GraphQLContext>): Promise<string | undefined> {
    const { document, operation, contextValue } = request;
    const principal = contextValue.principal;
    if (!document || !operation || principal.serverAdmin || !principal.projectId) return undefined;
    let cacheable = this.documents.get(document);
    if (cacheable === undefined) {
      cacheable = cacheableDocument(this.schema, document, operation);
      this.documents.set(document, cacheable);
    }
    if (!cacheable) return undefined;
    let revision: string;
    try {
      revision = await this.options.revision(principal.projectId);
    } catch {
      // The request goes on uncached and meets the database's trouble itself.
      return undefined;
    }
    return JSON.stringify([principal.projectId, revision, principal.role, request.queryHash, request.operationName ?? null, request.request.variables ?? {}]);
  }

  private store(key: string, data: Record<string, unknown>, reads: Entry['reads']): void {
    const bytes = JSON.stringify(data).length + key.length;
    if (bytes > this.maxBytes / 8) return;
    this.entries.set(key, { data, reads: [...reads], bytes });
    this.bytes += bytes;
    while (this.entries.size > this.capacity || this.bytes > this.maxBytes) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}
