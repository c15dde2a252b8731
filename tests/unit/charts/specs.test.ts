import { barsSpec, heatmapSpec, rankingSpec, uniqueLabels, type ChartRun } from '../../../src/charts/specs';
import { renderSvg } from '../../../src/charts/render';

const run = (label: string, rank: number, value: number): ChartRun => ({
  label,
  model: 'm',
  strategy: 'FEW_SHOT',
  rank,
  rankCiLow: rank,
  rankCiHigh: rank + 1,
  macroAverage: { value, ciLow: value - 0.1, ciHigh: value + 0.05 },
  scores: { grade: { value, ciLow: null, ciHigh: null } },
});

describe('chart specifications', () => {
  it('keeps two runs of one name apart', () => {
    expect(uniqueLabels(['a', 'b', 'a', 'a (2)', 'a'])).toEqual(['a', 'b', 'a (2)′', 'a (2)', 'a (3)']);
    const spec = heatmapSpec({ title: 't', variables: ['grade'], runs: [run('same', 1, 0.9), run('same', 2, 0.5)], agreement: null }) as any;
    expect(spec.encoding.y.sort).toEqual(['same', 'same (2)']);
    expect(spec.data.values.filter((c: any) => c.column === 'grade').map((c: any) => c.value)).toEqual([0.9, 0.5]);
  });

  it('the heatmap has no agreement row without agreement, and a dash for a variable without a score', () => {
    const missing = { ...run('r', 1, 0.7), scores: {} };
    const spec = heatmapSpec({ title: 't', variables: ['grade'], runs: [missing], agreement: null }) as any;
    expect(spec.encoding.y.sort).toEqual(['r']);
    expect(spec.data.values.find((c: any) => c.column === 'grade')).toEqual(expect.objectContaining({ value: null, label: '–' }));
  });

  it('bars leave out runs without a macro average and draw the ceiling only when there is agreement', () => {
    const none = { ...run('x', 2, 0.5), macroAverage: null };
    const without = barsSpec({ title: 't', runs: [run('a', 1, 0.8), none], agreement: null }) as any;
    expect(without.data.values.map((b: any) => b.label)).toEqual(['a']);
    expect(without.layer).toHaveLength(2);
    const withCeiling = barsSpec({ title: 't', runs: [run('a', 1, 0.8)], agreement: { value: 0.9, ciLow: 0.85, ciHigh: 0.95 } }) as any;
    expect(withCeiling.layer.map((l: any) => l.mark.type)).toEqual(['bar', 'rule', 'rect', 'rule']);
    expect(withCeiling.title.subtitle).toContain('0.90 [0.85–0.95]');
  });

  it('renders every chart to SVG with the text it was given, escaped', async () => {
    const hostile = '</text><script>alert(1)</script>';
    const svg = await renderSvg(rankingSpec({ title: hostile, useCases: ['u'], models: [{ model: hostile, consensusRank: 1, consensusCiLow: null, consensusCiHigh: null, ranks: { u: 1 } }] }));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;/text&gt;&lt;script&gt;');
  });
});
