import { isUtf8 } from 'node:buffer';
import type { ResolverData } from 'type-graphql';
import { ImportAnnotationsInput } from '../modules/annotation/annotation.input';
import { CreateApiKeyInput } from '../modules/api-key/api-key.resolver';
import { StartAnnotationImportInput, StartPredictionImportInput, StartReportImportInput } from '../modules/background-task/background-task.input';
import { CreateDatasetInput, ImportReportsInput } from '../modules/dataset/dataset.input';
import { RegisterEndpointInput, UpdateModelInput } from '../modules/endpoint/endpoint.input';
import { ImportUseCaseConfigInput } from '../modules/extraction/extraction.input';
import { MAX_NAME_LENGTH, nameProblem } from '../modules/imports/text-checks';
import { childPath, MAX_JSON_DEPTH, NOT_FINITE_REASON, stringProblem, TOO_DEEP_REASON } from '../db/storable';
import { CreateProjectInput } from '../modules/project/project.types';
import { PromptExample } from '../modules/prompt/prompt.entity';
import { CreatePromptInput } from '../modules/prompt/prompt.input';
import { ImportPredictionsInput } from '../modules/run/run.input';
import { CreateUseCaseInput, UpdateUseCaseInput, VariableInput } from '../modules/use-case/use-case.input';
import { badInput } from '../domain/errors';

type InputClass = abstract new (...args: never[]) => object;

/**
 * Names, keys and ids the database indexes (use case, dataset, annotator, endpoint, prompt and
 * imported model names, variable keys): longer ones would fail the btree insert. Free-text names
 * without an index (runs, projects, API keys) share the limit so that names behave alike.
 */
export const NAME_FIELDS: ReadonlyMap<InputClass, readonly string[]> = new Map<InputClass, readonly string[]>([
  [CreateProjectInput, ['name']],
  [CreateApiKeyInput, ['name']],
  [CreateUseCaseInput, ['name']],
  [UpdateUseCaseInput, ['name']],
  [ImportUseCaseConfigInput, ['name']],
  [VariableInput, ['key']],
  [CreateDatasetInput, ['name']],
  [ImportAnnotationsInput, ['annotatorName']],
  [ImportPredictionsInput, ['modelName', 'name']],
  [StartAnnotationImportInput, ['annotatorName']],
  [StartPredictionImportInput, ['modelName', 'name']],
  [RegisterEndpointInput, ['name']],
  [CreatePromptInput, ['name']],
  [PromptExample, ['name']],
]);

/**
 * Imported files are checked row by row by the import itself, which reports the rows holding a
 * lone surrogate, a value nested too deep or a number out of range, and the rows holding a NUL
 * character (reports, annotations) or removes them (model output). The same fields are the only
 * ones a large request body may carry as inline files (inline-files.ts).
 */
export const FILE_CONTENT: ReadonlyMap<InputClass, string> = new Map<InputClass, string>([
  [ImportReportsInput, 'content'],
  [ImportAnnotationsInput, 'content'],
  [ImportPredictionsInput, 'content'],
  [StartReportImportInput, 'content'],
  [StartAnnotationImportInput, 'content'],
  [StartPredictionImportInput, 'content'],
]);

/**
 * Input fields named like names, keys or file contents that the lists above leave out, and why.
 * A test walks the schema's inputs: a new `name`, `…Name`, `key` or `content` field is listed
 * above or here when it is added.
 */
export const UNGUARDED_NAMES_AND_CONTENTS: Readonly<Record<string, string>> = {
  'StartRunInput.name': 'run-execution.service.ts limits run names itself (300 characters)',
  'StartExperimentInput.name': 'run-execution.service.ts limits experiment names itself (300 characters)',
  'StartExperimentTaskInput.name': 'the same check as StartExperimentInput.name (run-execution.service.ts plans the task before storing it)',
  'VariableConditionInput.key': 'names a variable of an earlier step, whose key is limited; another is refused (variable-rules.ts)',
  'ImportProjectBundleInput.name': 'the new project name, a free-text column without an index',
  'ImportProjectBundleInput.content': 'a bundle is read whole and checked like any argument, not row by row',
};

/** Fields that may be left out ("keep as is") but whose column cannot hold null. */
export const NOT_NULL_WHEN_GIVEN: ReadonlyMap<InputClass, readonly string[]> = new Map<InputClass, readonly string[]>([[UpdateModelInput, ['supportsThinking']]]);

function classOf(value: object): InputClass | undefined {
  const constructor = (value as { constructor?: unknown }).constructor;
  // a list is not an input object: the depth of JSON values counts it (a list of input objects
  // resets the depth at each element, which is an instance of its class)
  if (Array.isArray(value)) return undefined;
  return typeof constructor === 'function' && constructor !== Object ? (constructor as InputClass) : undefined;
}

/**
 * Checks one resolver argument before the resolver runs (type-graphql's `validateFn`), so that
 * no mutation or query can reach PostgreSQL with a value it refuses, which would be an internal
 * error instead of BAD_USER_INPUT, or one it would store altered:
 * - no string anywhere in the argument (JSON values and object keys included) holds a NUL
 *   character or a lone UTF-16 surrogate (the driver would write U+FFFD), except the content of
 *   imported files (see {@link FILE_CONTENT});
 * - JSON values hold only finite numbers (1e400 arrives as Infinity and would be stored as
 *   null) and nest at most {@link MAX_JSON_DEPTH} levels;
 * - names and keys are at most {@link MAX_NAME_LENGTH} characters, counted as code points, and
 *   hold no byte-order mark, which trimming would silently remove (see {@link NAME_FIELDS});
 * - fields of {@link NOT_NULL_WHEN_GIVEN} are left out or given a value, not null.
 *
 * Linear in the size of the argument; iterative, so a deeply nested JSON value cannot overflow
 * the stack. Throws a DomainException (BAD_USER_INPUT) naming the field.
 */
export function checkArgument(value: unknown, _type: unknown, data: ResolverData<object>): void {
  const where = (path: string) => path || `an argument of ${data.info.fieldName}`;
  // depth counts the arrays and plain objects around a value since the nearest input object
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const v = current.value;
    if (typeof v === 'string') {
      const reason = stringProblem(v);
      if (reason) throw badInput(`${where(current.path)} ${reason}`, { field: current.path });
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw badInput(`${where(current.path)} ${NOT_FINITE_REASON}`, { field: current.path });
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const cls = classOf(v);
    const depth = cls ? 0 : current.depth + 1;
    if (depth > MAX_JSON_DEPTH) throw badInput(`${where(current.path)} ${TOO_DEEP_REASON}`, { field: current.path });
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: childPath(current.path, i), depth }));
      continue;
    }
    const record = v as Record<string, unknown>;
    if (cls) {
      for (const field of NAME_FIELDS.get(cls) ?? []) {
        const name = record[field];
        const reason = typeof name === 'string' ? nameProblem(name) : null;
        if (reason) {
          const path = childPath(current.path, field);
          throw badInput(`${path} ${reason}`, { field: path });
        }
      }
      for (const field of NOT_NULL_WHEN_GIVEN.get(cls) ?? []) {
        if (Object.prototype.hasOwnProperty.call(record, field) && record[field] === null) {
          const path = childPath(current.path, field);
          throw badInput(`${path} cannot be null; leave it out to keep the current value`, { field: path });
        }
      }
    }
    const skip = cls && current.path === '' ? FILE_CONTENT.get(cls) : undefined;
    for (const [key, item] of Object.entries(record)) {
      const reason = stringProblem(key);
      if (reason) throw badInput(`${where(current.path)} has a key that ${reason}`, { field: current.path });
      if (key === skip) continue;
      stack.push({ value: item, path: childPath(current.path, key), depth });
    }
  }
}

/** The body-parser error of a request body that is not the UTF-8 it says it is. */
export const INVALID_UTF8_TYPE = 'encoding.invalid_utf8';

/**
 * express.json's `verify`: a UTF-8 body (the default) with bytes that are not UTF-8 is refused
 * (HTTP 400, BAD_USER_INPUT) instead of being decoded with U+FFFD in their place, which would
 * store an uploaded file altered.
 */
export function verifyUtf8Body(_req: unknown, _res: unknown, body: Buffer, encoding: string | null): void {
  if ((encoding === null || encoding.toLowerCase() === 'utf-8') && !isUtf8(body)) {
    throw Object.assign(new Error('The request body is not valid UTF-8'), { status: 400, type: INVALID_UTF8_TYPE });
  }
}
