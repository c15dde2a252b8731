/**
 * The prompt graph: variables grouped into steps (`graphStep`, the framework's `chain_order`),
 * steps linked into a DAG.
 *
 * - A variable without `graphStep` goes one step after its `dependsOn` parent, or into the
 *   lowest step when it has no parent (so a use case with only `dependsOn` still gets a graph).
 * - A `dependsOn` parent must sit in a strictly lower step (no cycles, no same-step conditions).
 * - A step waits for the steps holding its variables' `dependsOn` parents (conditional edges).
 * - A step holding at least one unconditional variable also waits for every lower step: this is
 *   the framework's "unconditional edge to the nearest later step without dependencies", a join
 *   where all earlier branches meet (e.g. a final quality check sees all answers).
 * - Steps with no path between them (two conditional branches off the same parent) are
 *   independent and run concurrently.
 * - A variable is asked when its parent was asked and answered a value that satisfies the
 *   condition (variables.ts `conditionHolds`); otherwise it is skipped and takes its default.
 *   A step with no variable left to ask is skipped without a call.
 * - A step sees (in its prompt) the answers of its ancestor steps, never those of a concurrent
 *   branch, so prompts do not depend on timing.
 */
import { ExtractionError } from './errors';
import type { ExtractionVariable } from './types';
import { sortVariables, validateVariables } from './variables';

export interface GraphStepPlan {
  step: number;
  /** keys of the step in variable order */
  keys: string[];
  /** the steps this one waits for (direct predecessors) */
  after: number[];
  /** every step with a path to this one */
  ancestors: number[];
  /** some variable of the step has a dependsOn condition */
  conditional: boolean;
}

export interface GraphPlan {
  steps: GraphStepPlan[];
  /** key → step */
  stepOf: Record<string, number>;
}

/**
 * Builds the step DAG (see the file header).
 * @throws ExtractionError BAD_VARIABLES (via validateVariables), BAD_GRAPH when a condition points
 *   at the same or a later step or graph steps are not integers.
 */
export function planGraph(variables: readonly ExtractionVariable[]): GraphPlan {
  validateVariables(variables);
  const ordered = sortVariables(variables);
  const byKey = new Map(ordered.map((v) => [v.key, v] as const));
  for (const v of ordered) {
    if (v.graphStep != null && !Number.isInteger(v.graphStep)) {
      throw new ExtractionError('BAD_GRAPH', `variable "${v.key}": graph step ${v.graphStep} is not an integer`);
    }
  }
  const explicit = ordered.map((v) => v.graphStep).filter((s): s is number => s != null);
  const rootStep = explicit.length > 0 ? Math.min(...explicit) : 1;

  const stepOf: Record<string, number> = {};
  const resolving = new Set<string>();
  const resolve = (v: ExtractionVariable): number => {
    const known = stepOf[v.key];
    if (known !== undefined) return known;
    if (v.graphStep != null) return (stepOf[v.key] = v.graphStep);
    if (!v.dependsOn) return (stepOf[v.key] = rootStep);
    if (resolving.has(v.key)) throw new ExtractionError('BAD_GRAPH', `dependency cycle through "${v.key}"`);
    resolving.add(v.key);
    const s = resolve(byKey.get(v.dependsOn.key)!) + 1;
    resolving.delete(v.key);
    return (stepOf[v.key] = s);
  };
  for (const v of ordered) resolve(v);

  for (const v of ordered) {
    if (!v.dependsOn) continue;
    const ps = stepOf[v.dependsOn.key]!;
    if (ps >= stepOf[v.key]!) {
      throw new ExtractionError(
        'BAD_GRAPH',
        `variable "${v.key}" (step ${stepOf[v.key]}) depends on "${v.dependsOn.key}" (step ${ps}): the condition must come from an earlier step`,
      );
    }
  }

  const stepNumbers = [...new Set(Object.values(stepOf))].sort((a, b) => a - b);
  const plans = new Map<number, GraphStepPlan>();
  for (const s of stepNumbers) {
    const vars = ordered.filter((v) => stepOf[v.key] === s);
    const after = new Set<number>();
    for (const v of vars) if (v.dependsOn) after.add(stepOf[v.dependsOn.key]!);
    if (vars.some((v) => !v.dependsOn)) for (const t of stepNumbers) if (t < s) after.add(t);
    plans.set(s, {
      step: s,
      keys: vars.map((v) => v.key),
      after: [...after].sort((a, b) => a - b),
      ancestors: [],
      conditional: vars.some((v) => v.dependsOn),
    });
  }
  for (const s of stepNumbers) {
    const plan = plans.get(s)!;
    const anc = new Set<number>();
    for (const a of plan.after) {
      anc.add(a);
      for (const x of plans.get(a)!.ancestors) anc.add(x);
    }
    plan.ancestors = [...anc].sort((a, b) => a - b);
  }
  return { steps: stepNumbers.map((s) => plans.get(s)!), stepOf };
}
