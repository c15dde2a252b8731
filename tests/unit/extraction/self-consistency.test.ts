import { aggregateCells, medoidIndex } from '../../../src/extraction/aggregation';
import { runStrategy } from '../../../src/extraction/strategies';
import { samplingTemperatures } from '../../../src/extraction/strategies/self-consistency';
import type { NormalisedCell } from '../../../src/analytics/types';
import type { EmbedFn, ExtractionVariable, StrategyContext } from '../../../src/extraction/types';
import { EXAMPLES, scriptedChat } from './support';

const VARS: ExtractionVariable[] = [
  { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'] },
  { key: 'size', type: 'NUMERIC' },
  { key: 'site', type: 'FREE_TEXT' },
  { key: 'organs', type: 'LIST' },
];

function ctx(over: Partial<StrategyContext> & Pick<StrategyContext, 'chat'>): StrategyContext {
  return { model: 'm', variables: VARS, examples: EXAMPLES.slice(0, 0), report: { id: 'r', text: 't' }, ...over };
}

/** Embeds a text as a one-hot-ish vector from a table, so medoids are known in advance. */
function tableEmbed(table: Record<string, number[]>): EmbedFn {
  return async (texts) => texts.map((t) => Float32Array.from(table[t] ?? [0, 0, 1]));
}

describe('sampling temperatures', () => {
  it('defaults to base ± 0.1 (paper §2.3)', () => {
    expect(samplingTemperatures(null, 0.6)).toEqual([0.5, 0.6, 0.7]);
    expect(samplingTemperatures({ samples: 5 }, 0.6)).toEqual([0.4, 0.5, 0.6, 0.7, 0.8]);
    expect(samplingTemperatures(null, undefined)).toEqual([0.5, 0.6, 0.7]);
    // At the edges the window moves inside [0, 2]: k samples keep k distinct temperatures.
    expect(samplingTemperatures(null, 0)).toEqual([0, 0.1, 0.2]);
    expect(samplingTemperatures({ samples: 4 }, 2)).toEqual([1.7, 1.8, 1.9, 2]);
    expect(new Set(samplingTemperatures({ samples: 20 }, 0.05)).size).toBe(20);
    expect(samplingTemperatures({ temperatures: [0.1, 0.3, 0.5, 0.9] }, 0.6)).toEqual([0.1, 0.3, 0.5, 0.9]);
  });
  it('rejects disagreeing sample counts and bad temperatures', () => {
    expect(() => samplingTemperatures({ samples: 2, temperatures: [0.1, 0.2, 0.3] }, 0.6)).toThrow(/2 samples but 3 temperatures/);
    expect(() => samplingTemperatures({ temperatures: [3] }, 0.6)).toThrow(/outside/);
    expect(() => samplingTemperatures({ samples: 0 }, 0.6)).toThrow(/k >= 1/);
  });
});

describe('SELF_CONSISTENCY', () => {
  it('sends each sample with its own temperature and seed, and keeps every sample', async () => {
    const answers = [
      '{"grade": "G2", "size": 10, "site": "liver", "organs": ["liver"]}',
      '{"grade": "g2", "size": "10.0", "site": "liver segment 6", "organs": ["liver", "lung"]}',
      '{"grade": "G3", "size": "10", "site": "colon", "organs": ["liver"]}',
    ];
    const { chat, requests } = scriptedChat((req) => answers[[0.2, 0.3, 0.4].indexOf(req.temperature!)]!);
    const res = await runStrategy('SELF_CONSISTENCY', ctx({ chat, seed: 42, sampling: { temperature: 0.3, topP: 0.95 } }));
    expect(requests.map((r) => r.temperature).sort()).toEqual([0.2, 0.3, 0.4]);
    expect(requests.map((r) => r.seed).sort()).toEqual([42, 43, 44]);
    expect(requests.every((r) => r.topP === 0.95)).toBe(true);
    expect(new Set(requests.map((r) => JSON.stringify(r.messages))).size).toBe(1);
    expect(res.samples!.map((s) => [s.index, s.temperature, s.seed])).toEqual([[0, 0.2, 42], [1, 0.3, 43], [2, 0.4, 44]]);
    expect(res.raw).toEqual(answers);
    expect(res.calls).toBe(3);
    expect(res.promptTokens).toBe(300);
    // normalised values vote: "G2" and "g2" agree, 10 / "10.0" / "10" agree
    expect(res.values['grade']).toBe('G2');
    expect(res.values['size']).toBe(10);
    expect(res.json!['grade']).toBe('G2');
    // the lexical medoid of liver / liver segment 6 / colon is one of the two liver answers
    expect(['liver', 'liver segment 6']).toContain(res.values['site']);
    expect(res.values['organs']).toEqual(['liver']);
  });

  it('a failed sample does not vote; all failed throws the first error', async () => {
    const err = Object.assign(new Error('down'), { code: 'CONNECTION', attempts: 3 });
    const { chat } = scriptedChat((req) => (req.temperature === 0.5 ? Promise.reject(err) : '{"grade": "G1"}'));
    const res = await runStrategy('SELF_CONSISTENCY', ctx({ chat }));
    expect(res.values['grade']).toBe('G1');
    expect(res.samples![0]!.error).toBe('CONNECTION: down');
    expect(res.attempts).toBe(2 + 3);
    const failing = scriptedChat(() => Promise.reject(err));
    await expect(runStrategy('SELF_CONSISTENCY', ctx({ chat: failing.chat }))).rejects.toBe(err);
  });

  it('uses the injected embedding function for the medoid', async () => {
    const answers = ['{"site": "a"}', '{"site": "b"}', '{"site": "c"}'];
    const { chat } = scriptedChat((_req, i) => answers[i]!);
    const embed = tableEmbed({ a: [1, 0, 0], b: [0.8, 0.6, 0], c: [0, 1, 0] });
    const res = await runStrategy('SELF_CONSISTENCY', ctx({ chat, embed }));
    expect(res.values['site']).toBe('b');
  });
});

describe('aggregateCells', () => {
  const grade = VARS[0]!;
  const site = VARS[2]!;
  const V = (value: string | number | string[]): NormalisedCell => ({ status: 'VALUE', value });
  const M: NormalisedCell = { status: 'MISSING' };
  const I = (category: 'OTHER' | 'AMBIGUOUS'): NormalisedCell => ({ status: 'INVALID', category });

  it('majority of at least two with a strict lead', async () => {
    expect(await aggregateCells(grade, [V('G1'), V('G2'), V('G2')])).toMatchObject({ cell: V('G2'), winner: 1, method: 'VOTE' });
    expect(await aggregateCells(grade, [M, V('G2'), M])).toMatchObject({ cell: M, winner: 0, method: 'VOTE' });
    expect(await aggregateCells(grade, [I('OTHER'), V('G3'), V('G3')])).toMatchObject({ cell: V('G3'), method: 'VOTE' });
  });

  it('no majority → medoid of the values', async () => {
    const embed = tableEmbed({ G1: [1, 0], G2: [0.9, 0.1], G3: [0, 1] });
    expect(await aggregateCells(grade, [V('G1'), V('G2'), V('G3')], embed)).toMatchObject({ method: 'MEDOID', winner: 1 });
    const tie = await aggregateCells(grade, [V('G1'), V('G1'), V('G3'), V('G3')], embed);
    expect(tie.method).toBe('MEDOID');
  });

  it('free text: missing majority, else medoid', async () => {
    expect(await aggregateCells(site, [M, M, V('liver')])).toMatchObject({ cell: M, method: 'MISSING_MAJORITY' });
    expect((await aggregateCells(site, [M, V('liver'), V('liver')])).cell).toEqual(V('liver'));
  });

  it('all invalid → the most frequent category; no sample → MISSING', async () => {
    expect(await aggregateCells(grade, [I('OTHER'), I('AMBIGUOUS'), I('AMBIGUOUS')])).toMatchObject({ cell: I('AMBIGUOUS'), winner: 1, method: 'ALL_INVALID' });
    expect(await aggregateCells(grade, [undefined, undefined])).toMatchObject({ winner: null, method: 'NO_SAMPLES' });
  });

  it('medoid ties go to the earliest candidate', async () => {
    expect(await medoidIndex(['x', 'y'], tableEmbed({ x: [1, 0], y: [0, 1] }))).toBe(0);
  });
});
