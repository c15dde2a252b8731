import { bootstrapGrid } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { buildGridInput } from '../../../src/analytics/grid-input';
import { scoreVariable } from '../../../src/analytics/metrics';
import { cellOf, normaliseRecord } from '../../../src/analytics/normalise';
import type { VariableSpec } from '../../../src/analytics/types';

const specs: VariableSpec[] = [
  { key: 'birads', type: 'CATEGORICAL', options: ['3', '4A', '4B'], collapseMap: { '4A': '4', '4B': '4' }, weight: 2 },
  { key: 'size', type: 'NUMERIC' },
  { key: 'organs', type: 'LIST' },
];
const refs = [
  { birads: '4A', size: 10, organs: ['liver'] },
  { birads: '3', organs: [] },
  { birads: '4B', size: 2, organs: ['lung', 'bone'] },
].map((r) => normaliseRecord(specs, r, 'reference'));
const runRecords = [
  { birads: '4B', size: '10', organs: ['liver'] },
  { birads: '3', size: 1, organs: 'none' },
  undefined,
].map((r) => (r === undefined ? undefined : normaliseRecord(specs, r, 'prediction')));
const similarity = () => 0.5;

describe('buildGridInput', () => {
  it('gives the same points as scoreVariable', () => {
    const input = buildGridInput(specs, refs, [{ id: 'run', records: runRecords }], { similarity });
    const grid = bootstrapGrid({ ...input, resamples: 10, seed: 1 });
    specs.forEach((spec, v) => {
      const s = scoreVariable(
        spec,
        refs.map((r) => r[spec.key]),
        runRecords.map((r) => r?.[spec.key]),
        { similarity },
      );
      expect(grid.points[v]).toBeCloseTo(s.value, 15);
    });
    expect(input.variables.map((v) => v.weight)).toEqual([2, 1, 1]);
    expect(Array.from(input.variables[1]!.groups)).toEqual([0, -1, 0]);
  });

  it('supports collapsed and plain-accuracy scoring', () => {
    const collapsed = buildGridInput(specs, refs, [{ id: 'run', records: runRecords }], { similarity, collapsed: true });
    const g = bootstrapGrid({ ...collapsed, resamples: 5 });
    const s = scoreVariable(specs[0]!, refs.map((r) => r.birads), runRecords.map((r) => r?.birads));
    expect(g.points[0]).toBeCloseTo(s.collapsed!.primary.effective, 15);
    const acc = buildGridInput(specs, refs, [{ id: 'run', records: runRecords }], { metric: 'ACCURACY' });
    const ga = bootstrapGrid({ ...acc, resamples: 5 });
    expect(ga.points[0]).toBeCloseTo(s.accuracy.effective, 15);
    // organs: [liver]=[liver] right, []=none right, third report has no prediction
    expect(ga.points[2]).toBeCloseTo(2 / 3, 15);
  });

  it('checks run lengths', () => {
    expect(() => buildGridInput(specs, refs, [{ id: 'short', records: [] }])).toThrow(AnalyticsError);
  });
});

describe('variables named like inherited object properties', () => {
  it('a record without the key has no cell, whatever its prototype holds', () => {
    const spec: VariableSpec = { key: 'constructor', type: 'CATEGORICAL', options: ['a', 'b'] };
    const proto: VariableSpec = { key: '__proto__', type: 'CATEGORICAL', options: ['a', 'b'] };
    const references = [JSON.parse('{"constructor": {"status": "VALUE", "value": "a"}, "__proto__": {"status": "VALUE", "value": "b"}}'), {}];
    const predictions = [{}, JSON.parse('{"constructor": {"status": "VALUE", "value": "a"}, "__proto__": {"status": "VALUE", "value": "b"}}')];
    const { variables, runs } = buildGridInput([spec, proto], references, [{ id: 'r', records: predictions }]);
    // Report 2 has no reference for either variable (no group, no item score); report 1's
    // prediction has no cell (scored 0).
    expect(Array.from(variables[0]!.groups)).toEqual([0, -1]);
    expect(Array.from(variables[1]!.groups)).toEqual([0, -1]);
    expect(Array.from(runs[0]!.items[0]!)).toEqual([0, NaN]);
    expect(Array.from(runs[0]!.items[1]!)).toEqual([0, NaN]);
    expect(cellOf({}, 'toString')).toBeUndefined();
    expect(cellOf(JSON.parse('{"__proto__": 1}'), '__proto__')).toBe(1);
  });
});
