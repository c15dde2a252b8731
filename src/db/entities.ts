import { AuditEvent } from '../modules/audit/audit-event.entity';
import { BackgroundTask } from '../modules/background-task/background-task.entity';
import { Annotation } from '../modules/annotation/annotation.entity';
import { Annotator } from '../modules/annotation/annotator.entity';
import { ApiKey } from '../modules/api-key/api-key.entity';
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

export const ENTITIES = [
  Project,
  ApiKey,
  UseCase,
  Variable,
  Dataset,
  Report,
  Annotator,
  Annotation,
  Endpoint,
  Model,
  Prompt,
  Experiment,
  Run,
  Prediction,
  AuditEvent,
  BackgroundTask,
];
