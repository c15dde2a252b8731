import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Endpoint, EndpointKind } from './endpoint.entity';
import { Model, SamplingParams, SizeClass, Specialisation } from './model.entity';

@InputType()
export class RegisterEndpointInput {
  @Field(() => ID) projectId!: string;
  @Field() name!: string;
  @Field({ description: 'OpenAI-compatible base URL including /v1, e.g. http://gpu-1:8000/v1.' }) baseUrl!: string;
  @Field(() => EndpointKind, { defaultValue: EndpointKind.VLLM }) kind!: EndpointKind;
  @Field(() => String, { nullable: true, description: 'Write-only: stored encrypted, never returned. Printable ASCII, no spaces or line breaks.' }) apiKey?: string | null;
  @Field(() => Int, { nullable: true }) gpuCount?: number | null;
  @Field(() => String, { nullable: true }) hardware?: string | null;
  @Field(() => Int, { defaultValue: 4, description: 'Requests in flight at once.' }) maxConcurrency!: number;
  @Field(() => Int, { defaultValue: 120000, description: 'Per request, milliseconds: 1000 to 600000.' }) timeoutMs!: number;
}

@ObjectType()
export class RegisterEndpointPayload {
  @Field(() => Endpoint) endpoint!: Endpoint;
  @Field(() => [Model], { description: 'Models the endpoint serves.' }) models!: Model[];
  @Field(() => [String], { description: "What the probe dropped or ignored of the endpoint's answer (e.g. models beyond the first 1,000), in the server's words." })
  warnings!: string[];
}

@InputType()
export class RefreshEndpointInput {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true, description: 'Replace the stored API key (write-only); empty string removes it.' })
  apiKey?: string | null;
}

@ObjectType()
export class RefreshEndpointPayload {
  @Field(() => Endpoint) endpoint!: Endpoint;
  @Field(() => [Model]) models!: Model[];
  @Field(() => [String], { description: "What the probe dropped or ignored of the endpoint's answer (e.g. models beyond the first 1,000), in the server's words." })
  warnings!: string[];
}

@InputType({ description: 'Model metadata; fields left out stay as they are.' })
export class UpdateModelInput {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) hfRepo?: string | null;
  @Field(() => String, { nullable: true }) family?: string | null;
  @Field(() => Float, { nullable: true }) parameterCountB?: number | null;
  @Field(() => Float, { nullable: true }) activeParameterCountB?: number | null;
  @Field(() => SizeClass, { nullable: true, description: 'Default: derived from parameterCountB.' }) sizeClass?: SizeClass | null;
  @Field(() => Specialisation, { nullable: true }) specialisation?: Specialisation | null;
  @Field(() => String, { nullable: true }) quantisation?: string | null;
  @Field({ nullable: true }) supportsThinking?: boolean;
  @Field(() => SamplingParams, { nullable: true }) defaultSampling?: SamplingParams | null;
}

@ObjectType()
export class UpdateModelPayload {
  @Field(() => Model) model!: Model;
}
