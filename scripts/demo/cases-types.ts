import type { Rng, Strategy, Value, VarDef } from './lib';

export interface MadeReport {
  text: string;
  meta: Record<string, unknown>;
  truth: Record<string, Value>;
}

/** How the generator writes one use case of the demo. */
export interface UseCaseGen {
  slug: string;
  name: string;
  description: string;
  language: string;
  reportType: string;
  tags: string[];
  idPrefix: string;
  count: number;
  variables: VarDef[];
  /** the task text with the exact JSON template (paper Table A3 layout) */
  task: string;
  /** the system rules when the use case has its own (RADS guided prompting); null: built-in per strategy */
  system?: string | null;
  strategies: Strategy[];
  /** scales the strategy gains (the paper's strategy share of variance differs by use case) */
  strategyScale: number;
  /** human annotators besides the consensus */
  annotators: number;
  /** RADS: runs with the guided system prompt off, and thinking variants */
  rads?: boolean;
  distractors?: Record<string, string[]>;
  make(rng: Rng, index: number): MadeReport;
}

export const CSV_MISSING = 'Not specified';
