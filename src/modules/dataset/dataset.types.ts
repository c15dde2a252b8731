import { ConnectionType } from '../../graphql/connection';
import { Dataset } from './dataset.entity';
import { Report } from './report.entity';

export const DatasetConnection = ConnectionType(Dataset, 'Dataset');
export const ReportConnection = ConnectionType(Report, 'Report');
