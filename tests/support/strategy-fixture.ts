import { createDataset, createUseCase, csv, importAnnotations, importPredictions, importReports, jsonl, ok } from './graphql-fixtures';
import type { TestApp } from './test-app';

/**
 * A study with several strategies per model over two use cases (RADS-like: one categorical
 * category and a numeric size), reports with metadata, models with family, size and reasoning
 * mode. Predictions are drawn from a seeded generator; the fixture keeps every observation's
 * truth so tests can compute pooled numbers independently of the server.
 */
export const FIXTURE_MODELS = [
  { name: 'qwen-32b', family: 'qwen', parameterCountB: 32, supportsThinking: true, thinking: true, base: 0.7 },
  { name: 'gemma-1b', family: 'gemma', parameterCountB: 1, supportsThinking: false, thinking: false, base: 0.45 },
  { name: 'gpt-ref', family: 'gpt', parameterCountB: 200, supportsThinking: true, thinking: true, base: 0.8 },
] as const;

export const FIXTURE_STRATEGIES = ['ZERO_SHOT', 'FEW_SHOT', 'PROMPT_GRAPH'] as const;
const STRATEGY_BONUS: Record<string, number> = { ZERO_SHOT: 0, FEW_SHOT: 0.08, PROMPT_GRAPH: 0.12 };
const INVALID_RATE: Record<string, number> = { 'qwen-32b': 0.03, 'gemma-1b': 0.15, 'gpt-ref': 0.01 };
const CATEGORIES = ['1', '2', '3', '4', '5'];
const MODALITIES = ['CT', 'MRI', 'US'];
const SCHEMES = ['BI-RADS', 'LI-RADS', 'PI-RADS', 'TI-RADS'];
export const REPORTS_PER_DATASET = 40;

export interface FixtureObservation {
  useCase: number;
  model: string;
  strategy: string;
  thinking: boolean;
  guided: boolean;
  variable: 'category' | 'size';
  report: string;
  modality: string;
  scheme: string;
  complexity: string;
  valid: boolean;
  score: number;
}

export interface StrategyFixture {
  useCases: { id: string; datasetId: string; complexity: string }[];
  models: Record<string, string>;
  runs: { id: string; model: string; strategy: string; useCase: number }[];
  observations: FixtureObservation[];
}

function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export async function createStrategyFixture(t: TestApp, projectId: string): Promise<StrategyFixture> {
  const rnd = generator(20240607);
  const fixture: StrategyFixture = { useCases: [], models: {}, runs: [], observations: [] };
  for (const [u, complexity] of ['complexity:low', 'complexity:high'].entries()) {
    const useCase = await createUseCase(t, projectId, {
      name: u === 0 ? 'RADS (low complexity)' : 'RADS (high complexity)',
      tags: ['radiology', complexity],
      variables: [
        { key: 'category', type: 'CATEGORICAL', options: CATEGORIES },
        { key: 'size', type: 'NUMERIC', tolerance: 1 },
      ],
    });
    const datasetId = await createDataset(t, useCase.id);
    const ids = Array.from({ length: REPORTS_PER_DATASET }, (_, i) => `U${u}-R${String(i + 1).padStart(2, '0')}`);
    const meta = ids.map((_, i) => ({ modality: MODALITIES[i % 3]!, scheme: SCHEMES[(i + u) % 4]! }));
    await importReports(t, datasetId, jsonl(ids.map((id, i) => ({ id, text: `Synthetic report ${id}`, ...meta[i] }))));
    const refCategory = ids.map((_, i) => CATEGORIES[(i * 7 + u) % 5]!);
    const refSize = ids.map((_, i) => 10 + i);
    await importAnnotations(t, datasetId, 'Reference', 'CSV', csv([['id', 'category', 'size'], ...ids.map((id, i) => [id, refCategory[i]!, refSize[i]!])]), {
      isReference: true,
    });
    fixture.useCases.push({ id: useCase.id, datasetId, complexity });
    for (const model of FIXTURE_MODELS) {
      for (const strategy of FIXTURE_STRATEGIES) {
        const p = model.base + STRATEGY_BONUS[strategy]! - 0.15 * u;
        const guided = strategy !== 'ZERO_SHOT';
        const rows = ids.map((id, i) => {
          const r1 = rnd();
          const r2 = rnd();
          const invalid = r1 < INVALID_RATE[model.name]!;
          const category = invalid ? 'possibly 3' : r1 < p ? refCategory[i]! : CATEGORIES[(CATEGORIES.indexOf(refCategory[i]!) + 1) % 5]!;
          const size = r2 < p ? refSize[i]! : refSize[i]! + 5;
          const common = { useCase: u, model: model.name, strategy, thinking: model.thinking, guided, report: id, modality: meta[i]!.modality, scheme: meta[i]!.scheme, complexity };
          fixture.observations.push(
            { ...common, variable: 'category', valid: !invalid, score: !invalid && category === refCategory[i] ? 1 : 0 },
            { ...common, variable: 'size', valid: true, score: size === refSize[i] ? 1 : 0 },
          );
          return { id, extracted_data: { category, size } };
        });
        const imported = await importPredictions(t, datasetId, {
          format: 'JSONL',
          layout: 'JSON_COLUMN',
          modelName: model.name,
          strategy,
          name: `${model.name} ${strategy}`,
          config: { thinking: model.thinking, guided },
          content: jsonl(rows),
        });
        fixture.models[model.name] = imported.run.model.id;
        fixture.runs.push({ id: imported.run.id, model: model.name, strategy, useCase: u });
      }
    }
  }
  for (const model of FIXTURE_MODELS) {
    ok(
      await t.gql(`mutation ($input: UpdateModelInput!) { updateModel(input: $input) { model { id } } }`, {
        input: { id: fixture.models[model.name], family: model.family, parameterCountB: model.parameterCountB, supportsThinking: model.supportsThinking },
      }),
    );
  }
  return fixture;
}

/** Benjamini–Hochberg written out (step-up, monotone), NaN left out. */
export function bhOracle(p: (number | null)[]): (number | null)[] {
  const idx = p.map((x, i) => [x, i] as const).filter(([x]) => x !== null && Number.isFinite(x)) as (readonly [number, number])[];
  const m = idx.length;
  const sorted = [...idx].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const q: (number | null)[] = p.map(() => null);
  let running = 1;
  for (let k = m - 1; k >= 0; k--) {
    running = Math.min(running, (sorted[k]![0] * m) / (k + 1));
    q[sorted[k]![1]] = running;
  }
  return q;
}
