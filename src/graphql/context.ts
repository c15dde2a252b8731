import type { AuditRecorder } from '../modules/audit/audit.service';
import type { CostMeter } from './query-cost';
import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';
import type { Principal } from '../modules/api-key/principal';
import type { RequestDeadline } from './request-deadline';
import type { InlineFiles } from '../modules/imports/inline-file';
import type { Services } from '../services';
import { ExecutionPacer } from './execution-pacer';
import { LoaderRegistry } from './loader-registry';

export interface GraphQLContext {
  principal: Principal;
  services: Services;
  loaders: LoaderRegistry;
  logger: Logger;
  /** Aborted when the HTTP client goes away or the request deadline passes. */
  signal?: AbortSignal;
  /** The request deadline of a query or mutation: long writes roll back when it passes (request-deadline.ts). */
  deadline?: RequestDeadline;
  /** Set for a query whose estimate assumed lists fuller than they may be (query-cost.ts). */
  costMeter?: CostMeter;
  /** Gathers the request's reads of patient data and its changes for the audit log. */
  audit?: AuditRecorder;
  /** Builds a large answer in slices, letting other requests in between (execution-pacer.ts). */
  pacer: ExecutionPacer;
  /** The files of import inputs kept as bytes of a large HTTP request body, by the token standing for each (json-body.ts). */
  inlineFiles?: InlineFiles;
}

export function createContext(
  dataSource: DataSource,
  services: Services,
  logger: Logger,
  principal: Principal,
  signal?: AbortSignal,
  executionSliceMs?: number,
): GraphQLContext {
  return { principal, services, loaders: new LoaderRegistry(dataSource, principal, services), logger, pacer: new ExecutionPacer(executionSliceMs), ...(signal ? { signal } : {}) };
}
