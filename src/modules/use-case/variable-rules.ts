import { MAX_MISSING_TOKENS, MAX_OPTIONS, MAX_VARIABLES } from '../../extraction/limits';
import { BOM, BOM_REASON, containsNul, nameProblem, NUL_REASON } from '../imports/text-checks';
import { VariableType } from './variable.entity';
import type { VariableInput } from './use-case.input';

export interface VariableDraft {
  key: string;
  type: VariableType;
  description: string | null;
  instructions: string | null;
  options: string[] | null;
  aliases: Record<string, string> | null;
  collapseMap: Record<string, string> | null;
  default: unknown;
  missingTokens: string[] | null;
  tolerance: number | null;
  weight: number;
  order: number;
  graphStep: number | null;
  dependsOn: { key: string; values: string[] } | null;
}

export interface RuleViolation {
  field: string;
  reason: string;
}

const fold = (s: string) => s.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();

function stringMap(value: unknown, field: string, problems: RuleViolation[]): Record<string, string> | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push({ field, reason: 'must be an object of strings' });
    return null;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string') {
      problems.push({ field: `${field}.${k}`, reason: 'must be a string' });
      continue;
    }
    out[k] = v;
  }
  return out;
}

/**
 * Checks a use case's variable list and turns it into drafts: unique keys, options for
 * categorical types, aliases and collapse maps that point at options, sane tolerance and
 * weight, and prompt-graph conditions that refer to a variable of an earlier step. Keys are at
 * most 500 characters, counted as code points (they are indexed); keys and options hold no
 * byte-order mark (trimming would change them silently) and no field a NUL character. At most
 * {@link MAX_VARIABLES} variables, {@link MAX_OPTIONS} options (and condition values) per
 * variable and {@link MAX_MISSING_TOKENS} missing tokens per variable.
 */
export function validateVariables(inputs: VariableInput[]): { drafts: VariableDraft[]; problems: RuleViolation[] } {
  const problems: RuleViolation[] = [];
  const drafts: VariableDraft[] = [];
  const seen = new Map<string, number>();
  if (inputs.length === 0) problems.push({ field: 'variables', reason: 'a use case needs at least one variable' });
  if (inputs.length > MAX_VARIABLES) {
    return { drafts, problems: [{ field: 'variables', reason: `a use case has at most ${MAX_VARIABLES} variables, got ${inputs.length}` }] };
  }

  inputs.forEach((input, index) => {
    const at = `variables[${index}]`;
    const key = input.key.trim();
    if (!key) problems.push({ field: `${at}.key`, reason: 'must not be empty' });
    const keyProblem = nameProblem(input.key);
    if (keyProblem) problems.push({ field: `${at}.key`, reason: keyProblem });
    // Also reached from config files (YAML), not only from GraphQL arguments, which are checked on entry.
    if (containsNul(input)) problems.push({ field: at, reason: NUL_REASON });
    if (seen.has(key)) problems.push({ field: `${at}.key`, reason: `duplicates variables[${seen.get(key)}] ("${key}")` });
    seen.set(key, index);

    if ((input.options?.length ?? 0) > MAX_OPTIONS) {
      problems.push({ field: `${at}.options`, reason: `at most ${MAX_OPTIONS} options, got ${input.options!.length}` });
      return;
    }
    if ((input.missingTokens?.length ?? 0) > MAX_MISSING_TOKENS) {
      problems.push({ field: `${at}.missingTokens`, reason: `at most ${MAX_MISSING_TOKENS} missing tokens, got ${input.missingTokens!.length}` });
    }
    if ((input.dependsOn?.values.length ?? 0) > MAX_OPTIONS) {
      problems.push({ field: `${at}.dependsOn.values`, reason: `at most ${MAX_OPTIONS} values, got ${input.dependsOn!.values.length}` });
    }

    let options: string[] | null = null;
    const categorical = input.type === VariableType.CATEGORICAL || input.type === VariableType.BINARY;
    if (categorical) {
      // Trimming would take a leading byte-order mark away and the option would silently differ from what was given.
      if ((input.options ?? []).some((o) => o.includes(BOM))) problems.push({ field: `${at}.options`, reason: `an option ${BOM_REASON}` });
      options = (input.options ?? []).map((o) => o.trim());
      if (options.length === 0) problems.push({ field: `${at}.options`, reason: `${input.type} needs options` });
      const folded = new Set<string>();
      for (const option of options) {
        if (!option) problems.push({ field: `${at}.options`, reason: 'options must not be empty' });
        if (folded.has(fold(option))) problems.push({ field: `${at}.options`, reason: `"${option}" is listed twice` });
        folded.add(fold(option));
      }
      if (input.type === VariableType.BINARY && options.length > 3) {
        problems.push({ field: `${at}.options`, reason: 'BINARY takes two options, or three with "not specified"' });
      }
    } else if (input.options && input.options.length > 0) {
      problems.push({ field: `${at}.options`, reason: `${input.type} takes no options` });
    }

    const optionSet = new Set((options ?? []).map(fold));
    const aliases = stringMap(input.aliases, `${at}.aliases`, problems);
    const collapseMap = stringMap(input.collapseMap, `${at}.collapseMap`, problems);
    if (aliases && categorical) {
      for (const [alias, target] of Object.entries(aliases)) {
        if (!optionSet.has(fold(target))) {
          problems.push({ field: `${at}.aliases.${alias}`, reason: `"${target}" is not an option` });
        }
      }
    }
    if (collapseMap) {
      if (!categorical) problems.push({ field: `${at}.collapseMap`, reason: 'only categorical variables collapse' });
      for (const source of Object.keys(collapseMap)) {
        if (categorical && !optionSet.has(fold(source))) {
          problems.push({ field: `${at}.collapseMap.${source}`, reason: `"${source}" is not an option` });
        }
      }
    }
    const tolerance = input.tolerance ?? null;
    if (tolerance !== null) {
      if (input.type !== VariableType.NUMERIC) problems.push({ field: `${at}.tolerance`, reason: 'only NUMERIC variables have a tolerance' });
      if (!(tolerance >= 0) || !Number.isFinite(tolerance)) problems.push({ field: `${at}.tolerance`, reason: 'must be a finite number ≥ 0' });
    }
    const weight = input.weight ?? 1;
    if (!(weight > 0) || !Number.isFinite(weight)) problems.push({ field: `${at}.weight`, reason: 'must be a finite number > 0' });

    drafts.push({
      key,
      type: input.type,
      description: input.description?.trim() || null,
      instructions: input.instructions?.trim() || null,
      options,
      aliases,
      collapseMap,
      default: input.default === undefined ? null : input.default,
      missingTokens: input.missingTokens ?? null,
      tolerance,
      weight,
      order: index,
      graphStep: input.graphStep ?? null,
      dependsOn: input.dependsOn ? { key: input.dependsOn.key.trim(), values: [...input.dependsOn.values] } : null,
    });
  });

  const byKey = new Map(drafts.map((d) => [d.key, d]));
  drafts.forEach((draft, index) => {
    if (!draft.dependsOn) return;
    const at = `variables[${index}].dependsOn`;
    const target = byKey.get(draft.dependsOn.key);
    if (!target) {
      problems.push({ field: at, reason: `refers to unknown variable "${draft.dependsOn.key}"` });
      return;
    }
    if (draft.graphStep === null || target.graphStep === null || target.graphStep >= draft.graphStep) {
      problems.push({ field: at, reason: `"${target.key}" must be in an earlier graph step than "${draft.key}"` });
    }
    if (draft.dependsOn.values.length === 0) problems.push({ field: at, reason: 'needs at least one value' });
  });

  return { drafts, problems };
}
