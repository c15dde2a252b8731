import { ExtractionError } from '../../../src/extraction/errors';
import { buildRunSnapshot, MAX_DEADLINE_MS, runSettingsProblem, strategyContext, type RunSettings, type SnapshotSource } from '../../../src/extraction/run-snapshot';
import type { PromptExample } from '../../../src/extraction/types';

const EXAMPLES: PromptExample[] = ['a', 'b', 'c', 'd'].map((name) => ({ name, input: `report ${name}`, output: { size: name } }));

function source(overrides: Partial<SnapshotSource> = {}): SnapshotSource {
  return {
    model: { id: 'm', servedName: 'served', maxModelLen: null, defaultSampling: { temperature: 0.1, topP: 0.9, seed: 7, maxTokens: null } },
    endpoint: { id: 'e', kind: 'VLLM', timeoutMs: 30_000, capabilities: {} },
    prompt: {
      id: 'p',
      version: 2,
      parts: { system: 'rules' },
      examples: EXAMPLES,
      modelConfig: {
        model: null,
        maxModelLen: null,
        sampling: { temperature: 0.3, topK: 20 },
        selfConsistency: { samples: 2, temperatures: [0.2, 0.4] },
        mergeConsecutiveMessages: true,
        systemMessagesAllowed: null,
        embeddingModel: null,
        extra: {},
      },
    },
    variables: [{ key: 'size', type: 'FREE_TEXT' } as SnapshotSource['variables'][number]],
    missingTokens: ['n/a'],
    ...overrides,
  };
}

const ZERO: RunSettings = { strategy: 'ZERO_SHOT', constrained: false, guided: true };

function thrown(run: () => unknown): ExtractionError {
  try {
    run();
  } catch (error) {
    if (error instanceof ExtractionError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe('buildRunSnapshot', () => {
  it("merges the model's defaults, the prompt's model config and the settings, in that order, the seed apart", () => {
    const { snapshot, warnings } = buildRunSnapshot(source(), { ...ZERO, sampling: { temperature: 0.5, maxTokens: null } });
    expect(snapshot.sampling).toEqual({ temperature: 0.5, topP: 0.9, topK: 20 });
    expect(snapshot.seed).toBe(7);
    expect(snapshot.mergeConsecutiveMessages).toBe(true);
    expect(snapshot.systemMessagesAllowed).toBeNull();
    expect(snapshot.missingTokens).toEqual(['n/a']);
    expect(snapshot.prompt).toEqual({ id: 'p', version: 2 });
    expect(snapshot.parts).toEqual({ system: 'rules' });
    expect(snapshot.examples).toEqual([]);
    expect(snapshot.selfConsistency).toBeNull();
    expect(warnings).toEqual([]);
  });

  it('gives the same snapshot for the same inputs and leaves its inputs as they were', () => {
    const from = source();
    const before = JSON.stringify(from);
    const settings: RunSettings = { ...ZERO, strategy: 'FEW_SHOT', exampleCount: 2 };
    const first = buildRunSnapshot(from, settings);
    expect(JSON.stringify(buildRunSnapshot(from, settings))).toBe(JSON.stringify(first));
    expect(JSON.stringify(from)).toBe(before);
  });

  it('takes self-consistency temperatures from the prompt config unless the settings give samples', () => {
    const sc = { ...ZERO, strategy: 'SELF_CONSISTENCY' } as const;
    expect(buildRunSnapshot(source(), sc).snapshot.selfConsistency).toEqual({ temperatures: [0.2, 0.4] });
    expect(buildRunSnapshot(source(), { ...sc, samples: 5 }).snapshot.selfConsistency).toEqual({ samples: 5 });
    const greedy = buildRunSnapshot(source(), { ...sc, sampling: { topK: 1 } });
    expect(greedy.snapshot.sampling.topK).toBeUndefined();
    expect(greedy.warnings).toEqual(['top_k 1 makes every self-consistency sample greedy; it is not sent for this strategy']);
  });

  it('draws the examples with the seed, or takes them by name, and needs one for one-shot', () => {
    const drawn = buildRunSnapshot(source(), { ...ZERO, strategy: 'FEW_SHOT' }).snapshot.examples;
    expect(drawn).toHaveLength(3);
    expect(new Set(drawn.map((e) => e.name)).size).toBe(3);
    expect(buildRunSnapshot(source(), { ...ZERO, strategy: 'FEW_SHOT' }).snapshot.examples).toEqual(drawn);
    expect(buildRunSnapshot(source(), { ...ZERO, strategy: 'ONE_SHOT', exampleNames: ['d', 'b'] }).snapshot.examples.map((e) => e.name)).toEqual(['d', 'b']);
    expect(thrown(() => buildRunSnapshot(source(), { ...ZERO, strategy: 'ONE_SHOT', exampleNames: ['nope'] }))).toMatchObject({ code: 'NO_EXAMPLES', field: 'exampleNames' });
    const bare = source({ prompt: null });
    expect(thrown(() => buildRunSnapshot(bare, { ...ZERO, strategy: 'ONE_SHOT' }))).toMatchObject({ code: 'NO_EXAMPLES', field: 'promptId' });
    expect(buildRunSnapshot(bare, { ...ZERO, strategy: 'CHAIN_OF_THOUGHT' }).snapshot.examples).toEqual([]);
  });

  it("fits the report into the model's context, lowering a larger limit with a warning", () => {
    const small = source({ model: { id: 'm', servedName: 's', maxModelLen: 8192, defaultSampling: { maxTokens: 1000 } } });
    const fitted = buildRunSnapshot(small, ZERO).snapshot.contextLimit!.maxTokens!;
    expect(fitted).toBeGreaterThanOrEqual(256);
    expect(fitted).toBeLessThan(8192 - 1000);
    const lowered = buildRunSnapshot(small, { ...ZERO, contextLimitTokens: 9000 });
    expect(lowered.snapshot.contextLimit).toEqual({ maxTokens: fitted });
    expect(lowered.warnings).toEqual([`contextLimitTokens lowered to ${fitted}, what fits the model's context of 8192 tokens`]);
    expect(buildRunSnapshot(small, { ...ZERO, contextLimitTokens: 100 }).snapshot.contextLimit).toEqual({ maxTokens: 100 });
    expect(buildRunSnapshot(source(), ZERO).snapshot.contextLimit).toBeNull();
  });

  it('sends no thinking toggle to OpenAI, warns of what the probe found unsupported, and sets the default deadline', () => {
    const openai = source({ endpoint: { id: 'e', kind: 'OPENAI', timeoutMs: 200_000, capabilities: { jsonSchema: false, thinkingToggle: false } } });
    const { snapshot, warnings } = buildRunSnapshot(openai, { ...ZERO, constrained: true, thinking: true });
    expect(snapshot.thinking).toBeNull();
    expect(warnings).toHaveLength(3);
    expect(snapshot.deadlineMs).toBe(MAX_DEADLINE_MS);
    expect(buildRunSnapshot(source(), { ...ZERO, thinking: false }).snapshot.thinking).toBe(false);
    expect(buildRunSnapshot(source(), ZERO).snapshot.deadlineMs).toBe(4 * 30_000 + 60_000);
  });

  it('refuses every setting out of its range, naming the field', () => {
    for (const [settings, field] of [
      [{ samples: 0 }, 'samples'],
      [{ samples: 21 }, 'samples'],
      [{ temperatures: [] }, 'temperatures'],
      [{ temperatures: [0.5, 2.5] }, 'temperatures'],
      [{ exampleCount: 99 }, 'exampleCount'],
      [{ contextLimitTokens: 1.5 }, 'contextLimitTokens'],
      [{ stepTimeoutMs: 0 }, 'stepTimeoutMs'],
      [{ deadlineMs: 10 }, 'deadlineMs'],
      [{ sampling: { temperature: -1 } }, 'sampling.temperature'],
      [{ sampling: { topP: 0 } }, 'sampling.topP'],
      [{ sampling: { topK: 2.5 } }, 'sampling.topK'],
      [{ sampling: { seed: -1 } }, 'sampling.seed'],
      [{ sampling: { repetitionPenalty: Number.NaN } }, 'sampling.repetitionPenalty'],
    ] as [Partial<RunSettings>, string][]) {
      expect(runSettingsProblem({ ...ZERO, ...settings })?.field).toBe(field);
      expect(thrown(() => buildRunSnapshot(source(), { ...ZERO, ...settings }))).toMatchObject({ code: 'BAD_INPUT', field });
    }
    expect(runSettingsProblem({ ...ZERO, deadlineMs: 10 })?.message).toBe(`deadlineMs must be an integer from 1000 to ${MAX_DEADLINE_MS}`);
    expect(runSettingsProblem({ ...ZERO, sampling: { topP: 0 } })?.message).toBe('sampling.topP must be a number above 0 and at most 1');
    expect(runSettingsProblem({ ...ZERO, samples: 20, temperatures: Array(20).fill(1), deadlineMs: 1000, sampling: { topP: 1, seed: 0 } })).toBeNull();
  });
});

describe('buildRunSnapshot: evidence', () => {
  it('stores QUOTES in the snapshot and the engine context; NONE or unset leaves no key, so existing snapshots stay the same', () => {
    const quotes = buildRunSnapshot(source(), { ...ZERO, evidence: 'QUOTES' }).snapshot;
    expect(quotes.evidence).toBe('QUOTES');
    expect(strategyContext(quotes, async () => { throw new Error('no call'); }, { id: 'r', text: 't' }).evidence).toBe('QUOTES');
    const none = buildRunSnapshot(source(), { ...ZERO, evidence: 'NONE' }).snapshot;
    const unset = buildRunSnapshot(source(), ZERO).snapshot;
    expect('evidence' in none).toBe(false);
    expect(JSON.stringify(none)).toBe(JSON.stringify(unset));
    expect(strategyContext(none, async () => { throw new Error('no call'); }, { id: 'r', text: 't' }).evidence).toBeUndefined();
  });

  it('refuses QUOTES when a variable is itself called "evidence", naming the setting', () => {
    const clash = source({ variables: [{ key: 'Evidence', type: 'FREE_TEXT' } as SnapshotSource['variables'][number]] });
    const error = thrown(() => buildRunSnapshot(clash, { ...ZERO, evidence: 'QUOTES' }));
    expect(error.code).toBe('BAD_INPUT');
    expect(error.field).toBe('evidence');
    expect(buildRunSnapshot(clash, ZERO).snapshot.variables[0]!.key).toBe('Evidence');
  });
});
