/** The format name and version a bundle carries. */
export const BUNDLE_FORMAT = 'reportql-project-bundle';
export const BUNDLE_VERSION = 1;

/**
 * One table of a project in a bundle: the bundle's key, the table, and the columns holding row
 * ids of tables earlier in the list (with the table they point to). The order is the import
 * order: every reference points to a table before it.
 */
export interface BundleTable {
  key: string;
  table: string;
  references: Record<string, { table: string; nullable: boolean }>;
}

export const BUNDLE_TABLES: readonly BundleTable[] = [
  { key: 'useCases', table: 'use_cases', references: {} },
  { key: 'variables', table: 'variables', references: { use_case_id: { table: 'use_cases', nullable: false } } },
  { key: 'datasets', table: 'datasets', references: { use_case_id: { table: 'use_cases', nullable: false } } },
  { key: 'reports', table: 'reports', references: { dataset_id: { table: 'datasets', nullable: false } } },
  { key: 'annotators', table: 'annotators', references: { dataset_id: { table: 'datasets', nullable: false } } },
  {
    key: 'annotations',
    table: 'annotations',
    references: {
      dataset_id: { table: 'datasets', nullable: false },
      annotator_id: { table: 'annotators', nullable: false },
      report_id: { table: 'reports', nullable: false },
      variable_id: { table: 'variables', nullable: false },
    },
  },
  { key: 'prompts', table: 'prompts', references: { use_case_id: { table: 'use_cases', nullable: false } } },
  { key: 'endpoints', table: 'endpoints', references: {} },
  { key: 'models', table: 'models', references: { endpoint_id: { table: 'endpoints', nullable: true } } },
  {
    key: 'experiments',
    table: 'experiments',
    references: { use_case_id: { table: 'use_cases', nullable: false }, dataset_id: { table: 'datasets', nullable: false } },
  },
  {
    key: 'runs',
    table: 'runs',
    references: {
      use_case_id: { table: 'use_cases', nullable: false },
      dataset_id: { table: 'datasets', nullable: true },
      model_id: { table: 'models', nullable: true },
      prompt_id: { table: 'prompts', nullable: true },
      experiment_id: { table: 'experiments', nullable: true },
    },
  },
  { key: 'predictions', table: 'predictions', references: { run_id: { table: 'runs', nullable: false }, report_id: { table: 'reports', nullable: false } } },
];

/** Endpoint columns that never leave the server (the key) or describe this server's view of it. */
export const ENDPOINT_RESET: Record<string, unknown> = {
  api_key_encrypted: null,
  health_status: 'UNKNOWN',
  health_latency_ms: null,
  health_last_error: null,
  last_seen_at: null,
  checked_at: null,
};
