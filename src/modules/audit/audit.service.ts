import type { DataSource } from 'typeorm';
import { paginate, type PageRequest } from '../../db/pagination';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import { AuditEvent, AuditKind, AuditOutcome } from './audit-event.entity';

/** What a read exposes: the kinds of data the audit log counts. */
export type ReadCategory = 'REPORT_TEXTS' | 'ANNOTATIONS' | 'PREDICTIONS' | 'CONFIG_EXPORTS';

export const MAX_AUDIT_TARGETS = 20;

interface Change {
  action: string;
  projectId: string | null;
  outcome: AuditOutcome;
  targets: string[];
}

/**
 * The accesses of one request (or one WebSocket operation), gathered while it runs and written
 * in one statement when it ends: reads counted per project and category, each mutation once.
 */
export class AuditRecorder {
  private readonly reads = new Map<string, { projectId: string | null; category: ReadCategory; objects: number }>();
  private changes: Change[] = [];

  constructor(
    private readonly service: AuditService,
    private readonly principal: Principal,
    private readonly transport: 'HTTP' | 'WEBSOCKET',
  ) {}

  read(category: ReadCategory, projectId: string | null | undefined): void {
    const project = projectId ?? this.principal.projectId;
    const key = `${project}|${category}`;
    const entry = this.reads.get(key);
    if (entry) entry.objects += 1;
    else this.reads.set(key, { projectId: project, category, objects: 1 });
  }

  change(action: string, projectId: string | null | undefined, outcome: AuditOutcome, targets: string[]): void {
    this.changes.push({ action, projectId: projectId ?? this.principal.projectId, outcome, targets: targets.slice(0, MAX_AUDIT_TARGETS) });
  }

  /** Writes what was gathered since the last flush. */
  async flush(): Promise<void> {
    if (this.reads.size === 0 && this.changes.length === 0) return;
    const rows = [
      ...[...this.reads.values()].map((r) => ({ projectId: r.projectId, kind: AuditKind.READ, action: r.category, outcome: AuditOutcome.OK, objects: r.objects, targets: [] as string[] })),
      ...this.changes.map((c) => ({ projectId: c.projectId, kind: AuditKind.CHANGE, action: c.action, outcome: c.outcome, objects: 1, targets: c.targets })),
    ];
    this.reads.clear();
    this.changes = [];
    await this.service.append(this.principal, this.transport, rows);
  }
}

export class AuditService {
  constructor(private readonly dataSource: DataSource) {}

  recorder(principal: Principal, transport: 'HTTP' | 'WEBSOCKET'): AuditRecorder {
    return new AuditRecorder(this, principal, transport);
  }

  async append(
    principal: Principal,
    transport: string,
    rows: { projectId: string | null; kind: AuditKind; action: string; outcome: AuditOutcome; objects: number; targets: string[] }[],
  ): Promise<void> {
    // The key's name, as the key had it (a key that is gone keeps its last known name here).
    await this.dataSource.query(
      `INSERT INTO audit_events (project_id, key_id, key_name, server_admin, kind, action, outcome, objects, targets, transport)
       SELECT r.project_id, $1, coalesce((SELECT name FROM api_keys WHERE id = $1), ''), $2, r.kind, r.action, r.outcome, r.objects,
              ARRAY(SELECT jsonb_array_elements_text(r.targets)), $3
         FROM jsonb_to_recordset($4::jsonb) AS r(project_id uuid, kind text, action text, outcome text, objects integer, targets jsonb)`,
      [principal.keyId, principal.serverAdmin, transport, JSON.stringify(rows.map((r) => ({ project_id: r.projectId, kind: r.kind, action: r.action, outcome: r.outcome, objects: r.objects, targets: r.targets })))],
    );
  }

  /** A project's audit log, oldest first; project ADMINs and server admins only. */
  list(principal: Principal, projectId: string, args: PageRequest & { kind?: AuditKind | null }) {
    requireRole(principal, projectId, Role.ADMIN, 'Project');
    const query = this.dataSource.getRepository(AuditEvent).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    if (args.kind) query.andWhere('e.kind = :kind', { kind: args.kind });
    return paginate(query, args, { column: 'e.at', scope: `audit:${projectId}:${args.kind ?? ''}`, value: (e) => e.at });
  }
}
