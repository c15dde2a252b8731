import { Annotation } from '../modules/annotation/annotation.entity';
import { BackgroundTask } from '../modules/background-task/background-task.entity';
import { Annotator } from '../modules/annotation/annotator.entity';
import { Dataset } from '../modules/dataset/dataset.entity';
import { Report } from '../modules/dataset/report.entity';
import { Endpoint } from '../modules/endpoint/endpoint.entity';
import { Model } from '../modules/endpoint/model.entity';
import { Project } from '../modules/project/project.entity';
import { Prompt } from '../modules/prompt/prompt.entity';
import { Experiment } from '../modules/run/experiment.entity';
import { Prediction } from '../modules/run/prediction.entity';
import { Run } from '../modules/run/run.entity';
import { UseCase } from '../modules/use-case/use-case.entity';
import { Variable } from '../modules/use-case/variable.entity';
import { firstPageLoaderFactory } from './child-connections';
import { byIdLoaderFactory, manyByLoaderFactory, type LoaderFactory } from './loader-registry';
import type { Node, NodeType } from './node';

/** One tenant-filtered by-id loader per node type; also what `node(id:)` routes through. */
export const projectById = byIdLoaderFactory(Project);
export const useCaseById = byIdLoaderFactory(UseCase);
export const variableById = byIdLoaderFactory(Variable);
export const datasetById = byIdLoaderFactory(Dataset);
export const reportById = byIdLoaderFactory(Report);
export const annotatorById = byIdLoaderFactory(Annotator);
export const annotationById = byIdLoaderFactory(Annotation);
export const endpointById = byIdLoaderFactory(Endpoint);
export const modelById = byIdLoaderFactory(Model);
export const promptById = byIdLoaderFactory(Prompt);
export const experimentById = byIdLoaderFactory(Experiment);
export const runById = byIdLoaderFactory(Run);
export const predictionById = byIdLoaderFactory(Prediction);
export const backgroundTaskById = byIdLoaderFactory(BackgroundTask);

export const variablesByUseCase = manyByLoaderFactory(Variable, 'useCaseId', ['order']);
export const annotatorsByDataset = manyByLoaderFactory(Annotator, 'datasetId', ['createdAt', 'id']);
export const annotationsByReport = manyByLoaderFactory(Annotation, 'reportId', ['annotatorId', 'variableId']);
export const modelsByEndpoint = manyByLoaderFactory(Model, 'endpointId', ['servedName']);

export const NODE_LOADERS: Record<Exclude<NodeType, 'ApiKey'>, LoaderFactory<string, Node | null>> = {
  Project: projectById,
  UseCase: useCaseById,
  Variable: variableById,
  Dataset: datasetById,
  Report: reportById,
  Annotator: annotatorById,
  Annotation: annotationById,
  Endpoint: endpointById,
  Model: modelById,
  Prompt: promptById,
  Experiment: experimentById,
  Run: runById,
  Prediction: predictionById,
  BackgroundTask: backgroundTaskById,
};

/** First pages of nested lists, batched over their parents. */
export const useCasesPageByProject = firstPageLoaderFactory(UseCase, 'project_id', 'created_at', (u) => u.createdAt);
export const endpointsPageByProject = firstPageLoaderFactory(Endpoint, 'project_id', 'created_at', (e) => e.createdAt);
export const modelsPageByProject = firstPageLoaderFactory(Model, 'project_id', 'created_at', (m) => m.createdAt);
export const experimentsPageByProject = firstPageLoaderFactory(Experiment, 'project_id', 'created_at', (x) => x.createdAt);
export const datasetsPageByUseCase = firstPageLoaderFactory(Dataset, 'use_case_id', 'created_at', (d) => d.createdAt);
export const promptsPageByUseCase = firstPageLoaderFactory(Prompt, 'use_case_id', 'created_at', (p) => p.createdAt);
export const runsPageByUseCase = firstPageLoaderFactory(Run, 'use_case_id', 'created_at', (r) => r.createdAt);
export const reportsPageByDataset = firstPageLoaderFactory(Report, 'dataset_id', 'ordinal', (r) => r.ordinal);
export const predictionsPageByRun = firstPageLoaderFactory(Prediction, 'run_id', 'report_ordinal', (p) => p.reportOrdinal);
