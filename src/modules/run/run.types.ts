import { ConnectionType } from '../../graphql/connection';
import { Experiment } from './experiment.entity';
import { Prediction } from './prediction.entity';
import { Run } from './run.entity';

export const ExperimentConnection = ConnectionType(Experiment, 'Experiment');
export const RunConnection = ConnectionType(Run, 'Run');
export const PredictionConnection = ConnectionType(Prediction, 'Prediction');
