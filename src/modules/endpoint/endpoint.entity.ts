import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar } from '../../graphql/scalars';

export enum EndpointKind {
  VLLM = 'VLLM',
  SGLANG = 'SGLANG',
  OLLAMA = 'OLLAMA',
  LLAMA_CPP = 'LLAMA_CPP',
  OPENAI = 'OPENAI',
  OTHER = 'OTHER',
}
registerEnumType(EndpointKind, { name: 'EndpointKind', description: 'The server software behind an OpenAI-compatible endpoint.' });

export enum HealthStatus {
  UNKNOWN = 'UNKNOWN',
  UP = 'UP',
  DOWN = 'DOWN',
}
registerEnumType(HealthStatus, { name: 'HealthStatus' });

@ObjectType({ description: 'Last known state of an endpoint.' })
export class EndpointHealth {
  @Field(() => HealthStatus)
  status!: HealthStatus;

  @Field(() => Int, { nullable: true, description: 'Latency of the last probe.' })
  latencyMs!: number | null;

  @Field(() => String, { nullable: true })
  lastError!: string | null;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Last time the endpoint answered.' })
  lastSeenAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Last time it was probed.' })
  checkedAt!: Date | null;
}

@Entity('endpoints')
@Index(['projectId', 'name'], { unique: true })
@ObjectType({ implements: Node, description: 'A registered OpenAI-compatible server (vLLM, SGLang, Ollama, …).' })
export class Endpoint extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field({ description: 'Base URL including /v1.' })
  @Column({ name: 'base_url', type: 'text' })
  baseUrl!: string;

  @Field(() => EndpointKind)
  @Column({ type: 'varchar', length: 16 })
  kind!: EndpointKind;

  @Field(() => Int, { nullable: true })
  @Column({ name: 'gpu_count', type: 'integer', nullable: true })
  gpuCount!: number | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  hardware!: string | null;

  @Field(() => Int)
  @Column({ name: 'max_concurrency', type: 'integer', default: 4 })
  maxConcurrency!: number;

  @Field(() => Int)
  @Column({ name: 'timeout_ms', type: 'integer', default: 120000 })
  timeoutMs!: number;

  /** AES-GCM ciphertext of the endpoint's API key; write-only through the API. */
  @Column({ name: 'api_key_encrypted', type: 'text', nullable: true })
  apiKeyEncrypted!: string | null;

  @Field({ description: 'Whether an API key is stored; the key itself is never returned.' })
  get hasApiKey(): boolean {
    return this.apiKeyEncrypted !== null;
  }

  /** Probed capabilities; the field resolver shows them to EDITOR and above. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  capabilities!: Record<string, unknown>;

  @Column({ name: 'health_status', type: 'varchar', length: 8, default: HealthStatus.UNKNOWN })
  healthStatus!: HealthStatus;

  @Column({ name: 'health_latency_ms', type: 'integer', nullable: true })
  healthLatencyMs!: number | null;

  @Column({ name: 'health_last_error', type: 'text', nullable: true })
  healthLastError!: string | null;

  @Column({ name: 'last_seen_at', type: 'timestamptz', nullable: true })
  lastSeenAt!: Date | null;

  @Column({ name: 'checked_at', type: 'timestamptz', nullable: true })
  checkedAt!: Date | null;

  /** The last probe's outcome in full; the field resolver shows a VIEWER the status only. */
  get health(): EndpointHealth {
    return {
      status: this.healthStatus,
      latencyMs: this.healthLatencyMs,
      lastError: this.healthLastError,
      lastSeenAt: this.lastSeenAt,
      checkedAt: this.checkedAt,
    };
  }

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
