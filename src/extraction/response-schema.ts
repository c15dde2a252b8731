/**
 * The JSON schema sent as response_format for constrained decoding, built from the variables.
 *
 * Decisions (documented for users of `constrained: true`):
 * - every variable is a required property, no other properties (`additionalProperties: false`),
 *   property order = variable order (grammar-based decoders emit keys in schema order);
 * - CATEGORICAL / BINARY: `enum` of the options, plus the variable's string default when it is
 *   not an option ("Not specified" for a Yes/No variable) and `null`, so "not stated" can always
 *   be expressed; "" is never offered (it is not an option);
 * - NUMERIC: a JSON number, `null`, or the variable's string default when it has one
 *   ("missing"): NOT an arbitrary string, so ranges like "3-4" cannot be produced;
 * - FREE_TEXT / EXACT_STRING: string or null; dictionary types (with a `structure`): an object
 *   (or array of objects) with the structure's keys as optional string/number/array properties;
 * - LIST: array of strings.
 * - with evidence, a last required property "evidence": an object with every variable's key
 *   (required) holding an array of strings, the quotes.
 * `strict: true` is requested; servers that implement only a subset (vLLM guided decoding, SGLang,
 * llama.cpp) accept these keywords (enum, anyOf, type arrays, required, additionalProperties).
 */
import { EVIDENCE_KEY, type ExtractionVariable, type JsonSchemaFormat } from './types';
import { sortVariables } from './variables';

function withStringDefault(v: ExtractionVariable, values: unknown[]): unknown[] {
  if (typeof v.default === 'string' && v.default.trim() !== '' && !values.includes(v.default)) values.push(v.default);
  return values;
}

function structureSchema(v: ExtractionVariable): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (const f of v.structure ?? []) {
    props[f.key] =
      f.options && f.options.length > 0
        ? { enum: [...f.options, null] }
        : f.type === 'list'
          ? { type: 'array', items: { type: ['string', 'number'] } }
          : { type: ['string', 'number', 'null'] };
  }
  const obj = { type: 'object', properties: props };
  return v.frameworkType === 'list of dictionaries' ? { type: 'array', items: obj } : obj;
}

/** JSON schema of one variable's value. */
export function variableSchema(v: ExtractionVariable): Record<string, unknown> {
  switch (v.type) {
    case 'CATEGORICAL':
    case 'BINARY':
      return { enum: [...withStringDefault(v, [...(v.options ?? [])]), null] };
    case 'NUMERIC': {
      const extra = withStringDefault(v, []);
      return extra.length > 0 ? { anyOf: [{ type: 'number' }, { enum: [...extra, null] }] } : { type: ['number', 'null'] };
    }
    case 'LIST':
      return { type: 'array', items: { type: 'string' } };
    case 'FREE_TEXT':
      if (v.structure && v.structure.length > 0) {
        const s = structureSchema(v);
        return { anyOf: [s, { type: ['string', 'null'] }] };
      }
      return { type: ['string', 'null'] };
    case 'EXACT_STRING':
      return { type: ['string', 'null'] };
    default: {
      const never: never = v.type;
      return { description: String(never) };
    }
  }
}

/** The object schema for a set of variables, with the quotes per variable when `evidence`. */
export function buildResponseSchema(variables: readonly ExtractionVariable[], evidence = false): Record<string, unknown> {
  const ordered = sortVariables(variables);
  const properties: Record<string, unknown> = {};
  for (const v of ordered) properties[v.key] = variableSchema(v);
  const required = ordered.map((v) => v.key);
  if (evidence) {
    const quotes: Record<string, unknown> = {};
    for (const v of ordered) quotes[v.key] = { type: 'array', items: { type: 'string' } };
    properties[EVIDENCE_KEY] = { type: 'object', properties: quotes, required: ordered.map((v) => v.key), additionalProperties: false };
    required.push(EVIDENCE_KEY);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** response_format for the chat request. */
export function buildResponseFormat(variables: readonly ExtractionVariable[], name = 'extraction', evidence = false): JsonSchemaFormat {
  return { type: 'json_schema', json_schema: { name, schema: buildResponseSchema(variables, evidence), strict: true } };
}
