import { randomUUID } from 'node:crypto';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { badInput, notFound } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import type { ApiKeyService, IssuedKey } from '../api-key/api-key.service';
import { requireRole, requireServerAdmin, type Principal } from '../api-key/principal';
import { importSource, importText, type ImportFileFields } from '../imports/upload';
import { findValueProblem, joinPath } from '../../db/storable';
import { EGRESS_REFUSALS, portOf, type EgressPolicy } from '../../llm/egress';
import { Project } from '../project/project.entity';
import { BUNDLE_FORMAT, BUNDLE_TABLES, BUNDLE_VERSION, ENDPOINT_RESET, type BundleTable } from './bundle.tables';

/** Rows read per query while a bundle is written. */
export const BUNDLE_PAGE_SIZE = 500;
/** Rows (or bytes of JSON) per INSERT while a bundle is read. */
const INSERT_ROWS = 500;
const INSERT_BYTES = 4 * 1024 * 1024;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** A piece of a bundle as it is written: its text and the rows of which table it carries. */
export interface BundleChunk {
  text: string;
  table: string | null;
  rows: number;
}

export interface ImportedBundle {
  project: Project;
  adminKey: IssuedKey;
  warnings: string[];
  tables: { name: string; rows: number }[];
}

type Row = Record<string, unknown>;

const isObject = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON value with every string that is an old row id replaced by the row's new id. */
function rewriteIds(value: unknown, ids: Map<string, string>): unknown {
  if (typeof value === 'string') return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => rewriteIds(item, ids));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewriteIds(v, ids)]));
  return value;
}

/**
 * A whole project as one JSON document (rows as stored, columns by their database names, the
 * rows' own ids) and back: a bundle read into a new project with fresh ids, in one transaction.
 */
export class BundleService {
  private columns: Promise<Map<string, Set<string>>> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly apiKeys: ApiKeyService,
    /** Endpoints arriving in a bundle point where a registered one may (egress.ts). */
    private readonly egress: EgressPolicy,
  ) {}

  private columnsOf(): Promise<Map<string, Set<string>>> {
    this.columns ??= (async () => {
      const rows = (await this.dataSource.query(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ANY($1::text[])`,
        [BUNDLE_TABLES.map((t) => t.table)],
      )) as { table_name: string; column_name: string }[];
      const map = new Map<string, Set<string>>();
      for (const r of rows) {
        if (!map.has(r.table_name)) map.set(r.table_name, new Set());
        map.get(r.table_name)!.add(r.column_name);
      }
      return map;
    })().catch((error: unknown) => {
      this.columns = null;
      throw error;
    });
    return this.columns;
  }

  /** Checks that the caller may export the project (its ADMIN or a server admin). */
  async checkExport(principal: Principal, projectId: string): Promise<void> {
    requireRole(principal, projectId, Role.ADMIN, 'Project');
    const [found] = (await this.dataSource.query('SELECT 1 FROM projects WHERE id = $1', [projectId])) as unknown[];
    if (!found) throw notFound('Project');
  }

  /**
   * The bundle's text, piece by piece: the tables are read page by page in one REPEATABLE READ
   * transaction (a consistent snapshot) and never held whole.
   */
  async *export(principal: Principal, projectId: string, signal?: AbortSignal): AsyncGenerator<BundleChunk> {
    await this.checkExport(principal, projectId);
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      const [project] = (await runner.query(`SELECT jsonb_build_object('id', id, 'name', name, 'created_at', created_at)::text AS row FROM projects WHERE id = $1`, [projectId])) as { row: string }[];
      if (!project) throw notFound('Project');
      yield {
        text: `{"format":${JSON.stringify(BUNDLE_FORMAT)},"version":${BUNDLE_VERSION},"exportedAt":${JSON.stringify(new Date().toISOString())},"secrets":"Endpoint API keys are not exported: api_key_encrypted is null; set keys with refreshEndpoint after the import.","project":${project.row}`,
        table: null,
        rows: 0,
      };
      for (const table of BUNDLE_TABLES) {
        yield { text: `,\n${JSON.stringify(table.key)}:[`, table: null, rows: 0 };
        const extra = table.table === 'endpoints' ? JSON.stringify(ENDPOINT_RESET) : '{}';
        let after = FIRST_ID;
        let first = true;
        for (;;) {
          if (signal?.aborted) return;
          const page = (await runner.query(
            `SELECT id, ((to_jsonb(t) - 'project_id') || $3::jsonb)::text AS row FROM ${table.table} t WHERE project_id = $1 AND id > $2 ORDER BY id LIMIT ${BUNDLE_PAGE_SIZE}`,
            [projectId, after, extra],
          )) as { id: string; row: string }[];
          if (page.length === 0) break;
          yield { text: (first ? '\n' : ',\n') + page.map((r) => r.row).join(',\n'), table: table.table, rows: page.length };
          first = false;
          after = page[page.length - 1]!.id;
          if (page.length < BUNDLE_PAGE_SIZE) break;
        }
        yield { text: ']', table: null, rows: 0 };
      }
      yield { text: '}\n', table: null, rows: 0 };
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }

  /**
   * A bundle into a new project: every row gets a fresh id and every reference (columns, and
   * ids inside JSON values such as run config snapshots) follows it; all in one transaction.
   * Runs that were QUEUED or RUNNING arrive CANCELLED; endpoints arrive without API keys.
   */
  async import(principal: Principal, input: ImportFileFields & { name: string }): Promise<ImportedBundle> {
    requireServerAdmin(principal);
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    const text = await importText(await importSource(input));
    let bundle: unknown;
    try {
      bundle = JSON.parse(text);
    } catch {
      throw badInput('content: the bundle is not valid JSON (malformed or cut short)', { field: 'content' });
    }
    const plan = await this.plan(bundle);
    try {
      return await this.dataSource.transaction(async (manager) => {
        const project = await manager.getRepository(Project).save(manager.getRepository(Project).create({ id: plan.projectId, name }));
        const adminKey = await this.apiKeys.issue(manager, { projectId: project.id, role: Role.ADMIN, serverAdmin: false, name: `${name} admin` });
        for (const { table, rows } of plan.tables) await this.insert(manager, table, rows);
        return { project, adminKey, warnings: plan.warnings, tables: plan.tables.map((t) => ({ name: t.table.key, rows: t.rows.length })) };
      });
    } catch (error) {
      const refused = error instanceof BundleRowsRefused ? error : null;
      if (refused) throw badInput(`content: bundle.${refused.key} has a row the database refuses (${refused.reason})`, { field: 'content', path: refused.key });
      throw error;
    }
  }

  /** Checks the bundle and rewrites its rows for the new project, before anything is written. */
  private async plan(bundle: unknown): Promise<{ projectId: string; tables: { table: BundleTable; rows: Row[] }[]; warnings: string[] }> {
    const refuse = (path: string, why: string) => badInput(`content: bundle.${path} ${why}`, { field: 'content', path });
    if (!isObject(bundle)) throw refuse('', 'must be a JSON object');
    if (bundle['format'] !== BUNDLE_FORMAT) throw refuse('format', `must be "${BUNDLE_FORMAT}"`);
    if (bundle['version'] !== BUNDLE_VERSION) throw refuse('version', `must be ${BUNDLE_VERSION} (this server reads version ${BUNDLE_VERSION})`);
    const columns = await this.columnsOf();
    const projectId = randomUUID();
    const ids = new Map<string, string>();
    const idsOfTable = new Map<string, Set<string>>();
    const oldProject = isObject(bundle['project']) ? bundle['project']['id'] : undefined;
    if (typeof oldProject === 'string') ids.set(oldProject, projectId);

    const sources: { table: BundleTable; rows: Row[] }[] = [];
    for (const table of BUNDLE_TABLES) {
      const rows = bundle[table.key];
      if (!Array.isArray(rows)) throw refuse(table.key, 'must be an array');
      const own = new Set<string>();
      rows.forEach((row, i) => {
        if (!isObject(row)) throw refuse(`${table.key}[${i}]`, 'must be an object');
        // JSON escapes decoded by the parse (\u0000, a lone \ud800) are text PostgreSQL refuses.
        const problem = findValueProblem(row, { depth: false });
        if (problem) throw refuse(joinPath(`${table.key}[${i}]`, problem.path), problem.reason);
        const id = row['id'];
        if (typeof id !== 'string' || id.length === 0 || id.length > 100) throw refuse(`${table.key}[${i}].id`, 'must be a non-empty string');
        if (ids.has(id)) throw refuse(`${table.key}[${i}].id`, 'repeats the id of another row');
        ids.set(id, randomUUID());
        own.add(id);
      });
      idsOfTable.set(table.table, own);
      sources.push({ table, rows: rows as Row[] });
    }

    await this.checkEndpoints(sources.find((s) => s.table.table === 'endpoints')?.rows ?? [], refuse);

    const warnings: string[] = [];
    let cancelled = 0;
    const tables = sources.map(({ table, rows }) => {
      const known = columns.get(table.table)!;
      const out = rows.map((row, i) => {
        const next: Row = {};
        for (const [column, value] of Object.entries(row)) {
          if (column === 'project_id') continue;
          if (!known.has(column)) throw refuse(`${table.key}[${i}]`, 'has a column this server does not know');
          const reference = table.references[column];
          if (reference) {
            if (value === null && reference.nullable) next[column] = null;
            else if (typeof value === 'string' && idsOfTable.get(reference.table)!.has(value)) next[column] = ids.get(value)!;
            else throw refuse(`${table.key}[${i}].${column}`, 'must be the id of a row in the bundle');
          } else if (column === 'id') next[column] = ids.get(value as string)!;
          else next[column] = Array.isArray(value) || isObject(value) ? rewriteIds(value, ids) : value;
        }
        for (const [column, reference] of Object.entries(table.references)) {
          if (!(column in next) && !reference.nullable) throw refuse(`${table.key}[${i}].${column}`, 'is missing');
        }
        next['project_id'] = projectId;
        if (table.table === 'endpoints') Object.assign(next, ENDPOINT_RESET);
        if (table.table === 'runs' && (next['status'] === 'QUEUED' || next['status'] === 'RUNNING')) {
          next['status'] = 'CANCELLED';
          next['finished_at'] ??= new Date().toISOString();
          cancelled += 1;
        }
        return next;
      });
      return { table, rows: out };
    });
    if (cancelled > 0) warnings.push(`${cancelled} run(s) were queued or running where they were exported and come in as CANCELLED; resume them with resumeRun once their endpoints work here.`);
    const endpoints = tables.find((t) => t.table.table === 'endpoints')!.rows.length;
    if (endpoints > 0) warnings.push(`${endpoints} endpoint(s) come without API keys; set them with refreshEndpoint(input: { id, apiKey }).`);
    return { projectId, tables, warnings };
  }

  /** Refuses the bundle when an endpoint's base URL is not an http(s) URL or points where the egress policy refuses. */
  private async checkEndpoints(rows: Row[], refuse: (path: string, why: string) => Error): Promise<void> {
    for (const [i, row] of rows.entries()) {
      const path = `endpoints[${i}].base_url`;
      let url: URL;
      try {
        url = new URL(String(row['base_url']));
      } catch {
        throw refuse(path, 'is not a URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(path, 'must be http(s)');
      const refusal = await this.egress.refusalOf(url.hostname, portOf(url));
      if (refusal !== null) throw refuse(path, `is refused by this server's egress policy: ${EGRESS_REFUSALS[refusal]}`);
    }
  }

  /** Multi-row INSERTs of one table's rows in batches (by rows and by bytes). */
  private async insert(manager: EntityManager, table: BundleTable, rows: Row[]): Promise<void> {
    let batch: string[] = [];
    let present = new Set<string>();
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const json = `[${batch.join(',')}]`;
      const list = [...present].map((c) => `"${c}"`).join(', ');
      batch = [];
      present = new Set();
      bytes = 0;
      try {
        await manager.query(`INSERT INTO ${table.table} (${list}) SELECT ${list} FROM jsonb_populate_recordset(NULL::${table.table}, $1::jsonb)`, [json]);
      } catch (error) {
        const code = error instanceof QueryFailedError ? String((error.driverError as { code?: unknown }).code ?? '') : '';
        if (/^2[23]/.test(code)) throw new BundleRowsRefused(table.key, PG_REASONS[code] ?? `error ${code}`);
        throw error;
      }
    };
    for (const row of rows) {
      const text = JSON.stringify(row);
      batch.push(text);
      for (const column of Object.keys(row)) present.add(column);
      bytes += text.length;
      if (batch.length >= INSERT_ROWS || bytes >= INSERT_BYTES) await flush();
    }
    await flush();
  }
}

/** PostgreSQL's data and integrity errors by SQLSTATE, in words that carry none of the data. */
const PG_REASONS: Record<string, string> = {
  '22P02': 'a value of the wrong type',
  '22007': 'a malformed date or time',
  '22008': 'a date or time out of range',
  '22003': 'a number out of range',
  '22001': 'a text too long for its column',
  '22023': 'an invalid value',
  '22032': 'invalid JSON in a value',
  '23502': 'a required value is missing',
  '23503': 'a reference to a missing row',
  '23505': 'a duplicate of a unique value',
  '23514': 'a value outside the allowed set',
};

class BundleRowsRefused extends Error {
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`bundle.${key} refused`);
  }
}
