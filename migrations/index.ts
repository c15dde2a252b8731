import { InitialSchema1764450000000 } from './1764450000000-initial-schema';
import { AnalyticsCache1764460000000 } from './1764460000000-analytics-cache';
import { VariableExtractionFields1764470000000 } from './1764470000000-variable-extraction-fields';
import { MillisecondTimestamps1764480000000 } from './1764480000000-millisecond-timestamps';
import { AppendOnlyAnalyticsChanges1764490000000 } from './1764490000000-append-only-analytics-changes';
import { PredictionsInReportOrder1764500000000 } from './1764500000000-predictions-in-report-order';
import { RunExecution1764510000000 } from './1764510000000-run-execution';
import { RateLimits1764520000000 } from './1764520000000-rate-limits';
import { AuditLog1764530000000 } from './1764530000000-audit-log';
import { AnalyticsChangeNotify1764546000000 } from './1764546000000-analytics-change-notify';
import { RunCellColumns1764556000000 } from './1764556000000-run-cell-columns';
import { RunCellCodes1764566000000 } from './1764566000000-run-cell-codes';
import { BackgroundTasks1764576000000 } from './1764576000000-background-tasks';
import { JobClaims1764577000000 } from './1764577000000-job-claims';
import { PredictionEvidence1764586000000 } from './1764586000000-prediction-evidence';

/** Applied in this order; a landed migration is never edited, only followed by a new one. */
export const MIGRATIONS: Function[] = [
  InitialSchema1764450000000,
  AnalyticsCache1764460000000,
  VariableExtractionFields1764470000000,
  MillisecondTimestamps1764480000000,
  AppendOnlyAnalyticsChanges1764490000000,
  PredictionsInReportOrder1764500000000,
  RunExecution1764510000000,
  RateLimits1764520000000,
  AuditLog1764530000000,
  AnalyticsChangeNotify1764546000000,
  RunCellColumns1764556000000,
  RunCellCodes1764566000000,
  BackgroundTasks1764576000000,
  JobClaims1764577000000,
  PredictionEvidence1764586000000,
];
