import { AuditResolver } from '../modules/audit/audit.resolver';
import { BackgroundTaskResolver } from '../modules/background-task/background-task.resolver';
import type { NonEmptyArray } from 'type-graphql';
import { AnnotationResolver } from '../modules/annotation/annotation.resolver';
import { BundleResolver } from '../modules/bundle/bundle.resolver';
import { ChartUrlResolver, ProjectChartResolver, UseCaseChartResolver } from '../modules/chart/chart.resolver';
import { ApiKeyResolver } from '../modules/api-key/api-key.resolver';
import { DatasetResolver, ReportResolver } from '../modules/dataset/dataset.resolver';
import { EndpointResolver, ModelResolver } from '../modules/endpoint/endpoint.resolver';
import { ExtractionResolver } from '../modules/extraction/extraction.resolver';
import { ProjectResolver } from '../modules/project/project.resolver';
import { PromptResolver } from '../modules/prompt/prompt.resolver';
import { ExperimentResolver, RunExecutionResolver } from '../modules/run/run-execution.resolver';
import { PredictionResolver, RunResolver } from '../modules/run/run.resolver';
import { DatasetStatsResolver, ProjectComparisonResolver, ProjectStatsResolver, RunScoresResolver, UseCaseStatsResolver } from '../modules/scoring/scoring.resolver';
import { UseCaseResolver } from '../modules/use-case/use-case.resolver';

export const RESOLVERS: NonEmptyArray<Function> = [
  ProjectResolver,
  ApiKeyResolver,
  UseCaseResolver,
  DatasetResolver,
  ReportResolver,
  AnnotationResolver,
  EndpointResolver,
  ModelResolver,
  PromptResolver,
  RunResolver,
  PredictionResolver,
  RunScoresResolver,
  UseCaseStatsResolver,
  ProjectStatsResolver,
  ProjectComparisonResolver,
  DatasetStatsResolver,
  ExtractionResolver,
  RunExecutionResolver,
  ExperimentResolver,
  AuditResolver,
  UseCaseChartResolver,
  ProjectChartResolver,
  ChartUrlResolver,
  BundleResolver,
  BackgroundTaskResolver,
];
