import { registerEnumType } from 'type-graphql';
import { badInput, type DomainException } from '../../domain/errors';
import { ImportError, type RowError } from './import-errors';

export enum ImportFormat {
  CSV = 'CSV',
  JSON = 'JSON',
  JSONL = 'JSONL',
}
registerEnumType(ImportFormat, {
  name: 'ImportFormat',
  description: 'CSV with a header row (delimiter , ; or tab, detected), a JSON array of objects, or JSON Lines.',
});

export enum DuplicatePolicy {
  REJECT = 'REJECT',
  UPSERT = 'UPSERT',
}
registerEnumType(DuplicatePolicy, {
  name: 'DuplicatePolicy',
  description: 'What to do with a row whose external id is already in the dataset.',
});

/** An ImportError as the API's BAD_USER_INPUT, with the first 50 row errors attached. */
export function importFailure(errors: readonly RowError[]): DomainException {
  const error = new ImportError(errors);
  return badInput(error.message, { rowErrors: error.errors, totalErrors: error.totalErrors });
}
