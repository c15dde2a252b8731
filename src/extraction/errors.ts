/** Typed error of the extraction engine: thrown on invalid configuration, never for a bad model answer. */
export type ExtractionErrorCode =
  | 'BAD_INPUT'
  | 'BAD_VARIABLES'
  | 'BAD_GRAPH'
  | 'NO_EXAMPLES'
  | 'BAD_CONFIG'
  | 'ALL_CALLS_FAILED';

export class ExtractionError extends Error {
  /** The input the problem is in, when known (e.g. `modelYaml`). */
  field?: string;

  constructor(
    readonly code: ExtractionErrorCode,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}
