import { Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar } from '../../graphql/scalars';

@Entity('projects')
@ObjectType({ implements: Node, description: 'A tenant: every other object belongs to exactly one project.' })
export class Project extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  /** A project is its own tenant (lets tenant-filtered loaders treat it like any row). */
  get projectId(): string {
    return this.id;
  }

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
