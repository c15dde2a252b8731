export {
  assertNoImportErrors,
  formatRowError,
  ImportError,
  MAX_REPORTED_ERRORS,
  sortRowErrors,
  type RowError,
} from './import-errors';
export {
  collectColumns,
  describeColumns,
  detectDelimiter,
  DuplicateIdTracker,
  parseRecords,
  readExternalId,
  readRecords,
  recordError,
  setOwn,
  type ExternalIdResult,
  type ParsedRecord,
  type ParseRecordsOptions,
  type ParseRecordsResult,
  type ReadRecordsResult,
  type RecordFormat,
} from './parse-records';
export { InlineFile, type InlineFiles } from './inline-file';
export { createRecordReader } from './record-reader';
export { textSlices, TEXT_SLICE_CHARS, type RecordReader, type RecordReaderOptions, type RecordSink } from './record-stream';
export { parseReports, ReportReader, type ParsedReport, type ParseReportsOptions, type ParseReportsResult } from './parse-reports';
export {
  AnnotationReader,
  parseAnnotations,
  resolveVariableColumns,
  type ParseAnnotationsOptions,
  type ParseAnnotationsResult,
  type ParsedAnnotation,
} from './parse-annotations';
export {
  MEDICAL_RECORD_LLM_COLUMNS,
  MEDICAL_RECORD_LLM_ID_FIELDS,
  parsePredictions,
  PredictionReader,
  readExtractedObject,
  type JsonColumnLayoutOptions,
  type MedicalRecordLlmLayoutOptions,
  type ParsedPrediction,
  type ParsePredictionsOptions,
  type ParsePredictionsResult,
  type PredictionLayout,
  type WideLayoutOptions,
} from './parse-predictions';
export {
  parsePythonLiteral,
  PYTHON_LITERAL_MAX_DEPTH,
  PythonLiteralError,
  type JsonValue,
  type PythonLiteralErrorCode,
} from './python-literal';
