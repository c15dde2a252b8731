import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar } from '../../graphql/scalars';

export enum Role {
  ADMIN = 'ADMIN',
  EDITOR = 'EDITOR',
  VIEWER = 'VIEWER',
}
registerEnumType(Role, {
  name: 'Role',
  description: 'ADMIN manages keys and deletes; EDITOR creates and imports; VIEWER reads.',
});

@Entity('api_keys')
@ObjectType({ implements: Node, description: 'A credential: a role in one project, or server-wide admin.' })
export class ApiKey extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  /** Null for a server admin key. */
  @Index()
  @Column({ name: 'project_id', type: 'uuid', nullable: true })
  projectId!: string | null;

  @Field(() => Role, { nullable: true, description: 'Null for a server admin key.' })
  @Column({ type: 'varchar', length: 16, nullable: true })
  role!: Role | null;

  @Field({ description: 'Server-wide admin: may create projects and act in any project.' })
  @Column({ name: 'server_admin', type: 'boolean', default: false })
  serverAdmin!: boolean;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field({ description: 'The first characters of the secret, to recognise it.' })
  @Column({ type: 'varchar', length: 32 })
  prefix!: string;

  /** SHA-256 of the secret (hex); keys are 256-bit random, so a fast hash is enough. */
  @Index({ unique: true })
  @Column({ name: 'secret_hash', type: 'char', length: 64 })
  secretHash!: string;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;
}
