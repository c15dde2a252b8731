import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { ConnectionType } from '../../graphql/connection';
import { DateTimeScalar } from '../../graphql/scalars';

export enum AuditKind {
  READ = 'READ',
  CHANGE = 'CHANGE',
}
registerEnumType(AuditKind, { name: 'AuditKind', description: 'READ: report texts, annotations, predictions or exports were read; CHANGE: a mutation.' });

export enum AuditOutcome {
  OK = 'OK',
  FAILED = 'FAILED',
}
registerEnumType(AuditOutcome, { name: 'AuditOutcome' });

/** One request's access of one kind: who, what, when. Append-only (the table refuses updates). */
@Entity('audit_events')
@ObjectType({ description: "One request's access of one kind to a project's data or configuration: who, what, when." })
export class AuditEvent {
  @Field(() => ID)
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Field(() => DateTimeScalar)
  @Column({ type: 'timestamptz', precision: 3, default: () => 'clock_timestamp()' })
  at!: Date;

  /** Null for server-wide actions (e.g. a server admin creating a project that failed). */
  @Column({ name: 'project_id', type: 'uuid', nullable: true })
  projectId!: string | null;

  @Field(() => ID, { description: 'The API key that made the request (its global ID may outlive the key).' })
  @Column({ name: 'key_id', type: 'uuid' })
  keyId!: string;

  @Field({ description: "The key's name at the time." })
  @Column({ name: 'key_name', type: 'text' })
  keyName!: string;

  @Field()
  @Column({ name: 'server_admin', type: 'boolean' })
  serverAdmin!: boolean;

  @Field(() => AuditKind)
  @Column({ type: 'varchar', length: 8 })
  kind!: AuditKind;

  @Field({ description: 'READ: REPORT_TEXTS, ANNOTATIONS, PREDICTIONS or CONFIG_EXPORTS; CHANGE: the mutation, e.g. registerEndpoint.' })
  @Column({ type: 'text' })
  action!: string;

  @Field(() => AuditOutcome)
  @Column({ type: 'varchar', length: 8 })
  outcome!: AuditOutcome;

  @Field(() => Int, { description: 'READ: how many values were read; CHANGE: 1.' })
  @Column({ type: 'integer' })
  objects!: number;

  @Field(() => [String], { description: 'CHANGE: the global IDs the mutation named in its input (at most 20).' })
  @Column({ type: 'text', array: true })
  targets!: string[];

  @Field({ description: 'HTTP or WEBSOCKET.' })
  @Column({ type: 'varchar', length: 16 })
  transport!: string;
}

export const AuditEventConnection = ConnectionType(AuditEvent, 'AuditEvent');
