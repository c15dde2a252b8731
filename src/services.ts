import type { DataSource } from 'typeorm';
import { AnnotationService } from './modules/annotation/annotation.service';
import { ApiKeyService } from './modules/api-key/api-key.service';
import { DatasetService } from './modules/dataset/dataset.service';
import { createSecretBox } from './llm/secret-box';
import { EndpointConnections } from './modules/endpoint/endpoint-connections';
import { EndpointService } from './modules/endpoint/endpoint.service';
import { ExtractionService } from './modules/extraction/extraction.service';
import { ProjectService } from './modules/project/project.service';
import { PromptService } from './modules/prompt/prompt.service';
import { RunService } from './modules/run/run.service';
import { ScoringService } from './modules/scoring/scoring.service';
import { UseCaseService } from './modules/use-case/use-case.service';

export interface Services {
  apiKeys: ApiKeyService;
  projects: ProjectService;
  useCases: UseCaseService;
  datasets: DatasetService;
  annotations: AnnotationService;
  endpoints: EndpointService;
  prompts: PromptService;
  runs: RunService;
  scoring: ScoringService;
  extraction: ExtractionService;
}

export interface ServiceOptions {
  /** Encrypts endpoint API keys at rest. */
  secretKey: string;
}

export function createServices(dataSource: DataSource, options: ServiceOptions): Services {
  const apiKeys = new ApiKeyService(dataSource);
  const useCases = new UseCaseService(dataSource);
  const datasets = new DatasetService(dataSource);
  const endpoints = new EndpointService(dataSource, new EndpointConnections(createSecretBox(options.secretKey)));
  const scoring = new ScoringService(dataSource, (modelId, principal) => endpoints.embedder(principal, modelId));
  return {
    apiKeys,
    projects: new ProjectService(dataSource, apiKeys),
    useCases,
    datasets,
    annotations: new AnnotationService(dataSource, datasets),
    endpoints,
    prompts: new PromptService(dataSource, useCases),
    runs: new RunService(dataSource, datasets),
    scoring,
    extraction: new ExtractionService(dataSource, endpoints, useCases),
  };
}
