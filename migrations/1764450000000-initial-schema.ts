import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1764450000000 implements MigrationInterface {
  name = 'InitialSchema1764450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE projects (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`);

    await q.query(`CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid REFERENCES projects(id) ON DELETE CASCADE,
      role varchar(16) CHECK (role IN ('ADMIN', 'EDITOR', 'VIEWER')),
      server_admin boolean NOT NULL DEFAULT false,
      name text NOT NULL,
      prefix varchar(32) NOT NULL,
      secret_hash char(64) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz,
      CHECK (server_admin OR (project_id IS NOT NULL AND role IS NOT NULL)))`);
    await q.query(`CREATE UNIQUE INDEX api_keys_secret_hash ON api_keys (secret_hash)`);
    await q.query(`CREATE INDEX api_keys_project ON api_keys (project_id)`);

    await q.query(`CREATE TABLE use_cases (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      language text,
      report_type text,
      tags text[] NOT NULL DEFAULT '{}',
      missing_tokens text[],
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX use_cases_project_name ON use_cases (project_id, name)`);

    await q.query(`CREATE TABLE variables (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      use_case_id uuid NOT NULL REFERENCES use_cases(id) ON DELETE CASCADE,
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      key text NOT NULL,
      type varchar(16) NOT NULL CHECK (type IN ('CATEGORICAL', 'BINARY', 'NUMERIC', 'FREE_TEXT', 'LIST', 'EXACT_STRING')),
      description text,
      options jsonb,
      aliases jsonb,
      collapse_map jsonb,
      default_value jsonb,
      missing_tokens text[],
      tolerance double precision,
      weight double precision NOT NULL DEFAULT 1,
      position integer NOT NULL,
      graph_step integer,
      depends_on jsonb)`);
    await q.query(`CREATE UNIQUE INDEX variables_use_case_key ON variables (use_case_id, key)`);
    await q.query(`CREATE INDEX variables_use_case_position ON variables (use_case_id, position)`);

    await q.query(`CREATE TABLE datasets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      use_case_id uuid NOT NULL REFERENCES use_cases(id) ON DELETE CASCADE,
      name text NOT NULL,
      language text,
      provenance text,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX datasets_use_case_name ON datasets (use_case_id, name)`);

    await q.query(`CREATE TABLE reports (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      ordinal integer NOT NULL,
      external_id text NOT NULL,
      text text NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX reports_dataset_external_id ON reports (dataset_id, external_id)`);
    await q.query(`CREATE INDEX reports_dataset_ordinal ON reports (dataset_id, ordinal)`);

    await q.query(`CREATE TABLE annotators (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      name text NOT NULL,
      kind varchar(16) NOT NULL DEFAULT 'HUMAN' CHECK (kind IN ('HUMAN', 'CONSENSUS')),
      is_reference boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX annotators_dataset_name ON annotators (dataset_id, name)`);
    await q.query(`CREATE UNIQUE INDEX annotators_one_reference_per_dataset ON annotators (dataset_id) WHERE is_reference`);

    await q.query(`CREATE TABLE annotations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      annotator_id uuid NOT NULL REFERENCES annotators(id) ON DELETE CASCADE,
      report_id uuid NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
      variable_id uuid NOT NULL REFERENCES variables(id) ON DELETE CASCADE,
      raw jsonb,
      value jsonb,
      status varchar(8) NOT NULL CHECK (status IN ('VALUE', 'MISSING', 'INVALID')),
      invalid_category varchar(16))`);
    await q.query(`CREATE UNIQUE INDEX annotations_annotator_report_variable ON annotations (annotator_id, report_id, variable_id)`);
    await q.query(`CREATE INDEX annotations_report ON annotations (report_id)`);
    await q.query(`CREATE INDEX annotations_dataset_annotator ON annotations (dataset_id, annotator_id)`);
    await q.query(`CREATE INDEX annotations_variable ON annotations (variable_id)`);

    await q.query(`CREATE TABLE endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      base_url text NOT NULL,
      kind varchar(16) NOT NULL,
      gpu_count integer,
      hardware text,
      max_concurrency integer NOT NULL DEFAULT 4,
      timeout_ms integer NOT NULL DEFAULT 120000,
      api_key_encrypted text,
      capabilities jsonb NOT NULL DEFAULT '{}',
      health_status varchar(8) NOT NULL DEFAULT 'UNKNOWN',
      health_latency_ms integer,
      health_last_error text,
      last_seen_at timestamptz,
      checked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX endpoints_project_name ON endpoints (project_id, name)`);

    await q.query(`CREATE TABLE models (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      endpoint_id uuid REFERENCES endpoints(id) ON DELETE SET NULL,
      served_name text NOT NULL,
      hf_repo text,
      family text,
      parameter_count_b double precision,
      active_parameter_count_b double precision,
      size_class varchar(8),
      specialisation varchar(8),
      quantisation text,
      supports_thinking boolean NOT NULL DEFAULT false,
      max_model_len integer,
      default_sampling jsonb NOT NULL DEFAULT '{}',
      available boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX models_endpoint_served_name ON models (endpoint_id, served_name) WHERE endpoint_id IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX models_imported_served_name ON models (project_id, served_name) WHERE endpoint_id IS NULL`);

    await q.query(`CREATE TABLE prompts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      use_case_id uuid NOT NULL REFERENCES use_cases(id) ON DELETE CASCADE,
      name text NOT NULL,
      version integer NOT NULL,
      system text,
      field_instructions text,
      task text,
      example_intro text,
      final_instruction text,
      examples jsonb NOT NULL DEFAULT '[]',
      settings jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX prompts_use_case_name_version ON prompts (use_case_id, name, version)`);

    await q.query(`CREATE TABLE experiments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      use_case_id uuid NOT NULL REFERENCES use_cases(id) ON DELETE CASCADE,
      dataset_id uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
      name text NOT NULL,
      config jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX experiments_project ON experiments (project_id, created_at)`);

    await q.query(`CREATE TABLE runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      use_case_id uuid NOT NULL REFERENCES use_cases(id) ON DELETE CASCADE,
      dataset_id uuid REFERENCES datasets(id) ON DELETE CASCADE,
      model_id uuid REFERENCES models(id) ON DELETE SET NULL,
      prompt_id uuid REFERENCES prompts(id) ON DELETE SET NULL,
      experiment_id uuid REFERENCES experiments(id) ON DELETE SET NULL,
      name text NOT NULL,
      strategy varchar(24) NOT NULL,
      config jsonb NOT NULL DEFAULT '{}',
      status varchar(16) NOT NULL,
      source varchar(16) NOT NULL,
      total_reports integer NOT NULL DEFAULT 0,
      succeeded_count integer NOT NULL DEFAULT 0,
      failed_count integer NOT NULL DEFAULT 0,
      prompt_tokens bigint NOT NULL DEFAULT 0,
      completion_tokens bigint NOT NULL DEFAULT 0,
      latency_ms_sum bigint NOT NULL DEFAULT 0,
      started_at timestamptz,
      finished_at timestamptz,
      error text,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX runs_use_case_dataset ON runs (use_case_id, dataset_id)`);
    await q.query(`CREATE INDEX runs_experiment ON runs (experiment_id)`);
    await q.query(`CREATE INDEX runs_model ON runs (model_id)`);

    await q.query(`CREATE TABLE predictions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      report_id uuid NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
      status varchar(16) NOT NULL CHECK (status IN ('SUCCEEDED', 'FAILED')),
      "values" jsonb,
      cells jsonb NOT NULL DEFAULT '{}',
      parsed jsonb,
      raw text,
      reasoning text,
      samples jsonb,
      finish_reason text,
      latency_ms integer,
      prompt_tokens integer,
      completion_tokens integer,
      attempts integer NOT NULL DEFAULT 1,
      error text,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX predictions_run_report ON predictions (run_id, report_id)`);
    await q.query(`CREATE INDEX predictions_report ON predictions (report_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'predictions',
      'runs',
      'experiments',
      'prompts',
      'models',
      'endpoints',
      'annotations',
      'annotators',
      'reports',
      'datasets',
      'variables',
      'use_cases',
      'api_keys',
      'projects',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
