/** Public surface of the extraction engine: prompts, output parsing, strategies, framework configs. */
export * from './types';
export * from './errors';
export {
  sortVariables,
  validateVariables,
  promptTypeName,
  templateValueOf,
  jsonTemplateObject,
  conditionHolds,
  mapFrameworkType,
  optionToString,
  type MappedType,
} from './variables';
export { renderTemplate, templatePlaceholders } from './template';
export {
  buildMessages,
  buildPromptSections,
  mergeConsecutive,
  renderFieldInstructions,
  renderJsonTemplate,
  renderExampleOutput,
  formatJsonObject,
  scopeReasoning,
  DEFAULT_SYSTEM_DIRECT,
  DEFAULT_SYSTEM_REASONING,
  DEFAULT_FIELD_INSTRUCTIONS,
  DEFAULT_TASK,
  DEFAULT_REPORT,
  DEFAULT_PREVIOUS_ANSWERS,
  DEFAULT_FINAL_DIRECT,
  DEFAULT_FINAL_REASONING,
  type BuildPromptOptions,
  type PromptSection,
} from './prompt-builder';
export { findJsonCandidates, parseCandidate, quoteBareValues, stripHashComments, type JsonCandidate } from './json-candidates';
export { parseOutput, splitReasoning, cellsOf, type RawOutput, type ParseOptions } from './output-parser';
export { buildResponseFormat, buildResponseSchema, variableSchema } from './response-schema';
export { selectExamples, drawIndices, DEFAULT_EXAMPLE_SEED } from './example-selection';
export { applyContextLimit, maxReportChars, CHARS_PER_TOKEN } from './context-limit';
export { aggregateCells, medoidIndex, lexicalEmbedFn, type AggregateOutcome, type AggregationMethod } from './aggregation';
export { planGraph, type GraphPlan, type GraphStepPlan } from './prompt-graph-plan';
export { STRATEGIES, runStrategy } from './strategies';
export { STRATEGY_FAMILY, DEFAULT_EXAMPLE_COUNT, type Strategy } from './strategies/common';
export { samplingTemperatures, DEFAULT_BASE_TEMPERATURE, DEFAULT_SAMPLES, TEMPERATURE_STEP } from './strategies/self-consistency';
export {
  importFrameworkConfig,
  importFrameworkModelConfig,
  exportFrameworkPromptYaml,
  exportFrameworkModelYaml,
  type FrameworkImport,
  type FrameworkModelConfig,
  type ExportPromptInput,
} from './config-yaml';
