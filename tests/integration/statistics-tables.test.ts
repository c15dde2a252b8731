import { createProject, failure, ok } from '../support/graphql-fixtures';
import { bhOracle, createStrategyFixture, FIXTURE_MODELS, type FixtureObservation, type StrategyFixture } from '../support/strategy-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** CR1 cluster-robust SE of the group coefficient in y ~ 1 + g, written out for two columns. */
function cr1GroupSe(obs: { g: number; y: number; c: string }[]): { beta: number; se: number } {
  const n = obs.length;
  const mA = mean(obs.filter((o) => o.g === 1).map((o) => o.y));
  const mB = mean(obs.filter((o) => o.g === 0).map((o) => o.y));
  const beta = mA - mB;
  // (XᵀX)⁻¹ for columns [1, g]: [[n, nA], [nA, nA]]⁻¹.
  const nA = obs.filter((o) => o.g === 1).length;
  const det = n * nA - nA * nA;
  const inv = [nA / det, -nA / det, -nA / det, n / det];
  const scores = new Map<string, [number, number]>();
  for (const o of obs) {
    const u = o.y - (mB + beta * o.g);
    const s = scores.get(o.c) ?? [0, 0];
    s[0] += u;
    s[1] += o.g * u;
    scores.set(o.c, s);
  }
  const meat = [0, 0, 0, 0];
  for (const [a, b] of scores.values()) {
    meat[0] += a * a;
    meat[1] += a * b;
    meat[2] += b * a;
    meat[3] += b * b;
  }
  const G = scores.size;
  // Row 1 of inv · meat · inv.
  const r = [inv[2]! * meat[0]! + inv[3]! * meat[2]!, inv[2]! * meat[1]! + inv[3]! * meat[3]!];
  const v = r[0]! * inv[1]! + r[1]! * inv[3]!;
  return { beta, se: Math.sqrt((G / (G - 1)) * ((n - 1) / (n - 2)) * v) };
}

describe('paired comparisons, strategy effects, contrasts and stratified results', () => {
  let t: TestApp;
  let project: { id: string };
  let fx: StrategyFixture;
  beforeAll(async () => {
    t = await startTestApp();
    project = await createProject(t, 'Strategy study');
    fx = await createStrategyFixture(t, project.id);
  }, 120_000);
  afterAll(() => t.close());

  const runOf = (model: string, strategy: string, useCase: number) => fx.runs.find((r) => r.model === model && r.strategy === strategy && r.useCase === useCase)!.id;

  it('Run.comparison: run − baseline per variable and macro, paired, with p- and BH q-values', async () => {
    const run = runOf('qwen-32b', 'PROMPT_GRAPH', 0);
    const baseline = runOf('qwen-32b', 'ZERO_SHOT', 0);
    const data = ok(
      await t.gql(
        `query ($r: ID!, $b: ID!) {
          run: node(id: $r) { ... on Run { scores(options: { resamples: 0 }) { macroAverage { value } variables { variable { key } estimate { value } } } } }
          base: node(id: $b) { ... on Run { scores(options: { resamples: 0 }) { macroAverage { value } variables { variable { key } estimate { value } } } } }
          cmp: node(id: $r) { ... on Run { comparison(baselineRunId: $b, options: { resamples: 400 }) {
            run { id } baseline { id } runMacroAverage { value } baselineMacroAverage { value }
            macroAverage { value ciLow ciHigh confidence resamples pValue qValue }
            variables { variable { key } metric difference { value ciLow ciHigh pValue qValue } } } } }
          self: node(id: $r) { ... on Run { comparison(baselineRunId: $r, options: { resamples: 100 }) { macroAverage { value ciLow ciHigh pValue } } } }
        }`,
        { r: run, b: baseline },
      ),
    );
    const cmp = data.cmp.comparison;
    expect(cmp.run.id).toBe(run);
    expect(cmp.baseline.id).toBe(baseline);
    expect(cmp.macroAverage.value).toBeCloseTo(data.run.scores.macroAverage.value - data.base.scores.macroAverage.value, 12);
    expect(cmp.macroAverage.ciLow).toBeLessThanOrEqual(cmp.macroAverage.value);
    expect(cmp.macroAverage.ciHigh).toBeGreaterThanOrEqual(cmp.macroAverage.value);
    expect(cmp.macroAverage.pValue).toBeGreaterThan(0);
    expect(cmp.macroAverage.pValue).toBeLessThanOrEqual(1);
    expect(cmp.macroAverage.qValue).toBeNull();
    for (const v of cmp.variables) {
      const a = data.run.scores.variables.find((x: any) => x.variable.key === v.variable.key).estimate.value;
      const b = data.base.scores.variables.find((x: any) => x.variable.key === v.variable.key).estimate.value;
      expect(v.difference.value).toBeCloseTo(a - b, 12);
    }
    const q = bhOracle(cmp.variables.map((v: any) => v.difference.pValue));
    cmp.variables.forEach((v: any, i: number) => expect(v.difference.qValue).toBeCloseTo(q[i]!, 12));
    // A run against itself: every replicate difference is 0.
    expect(data.self.comparison.macroAverage).toEqual({ value: 0, ciLow: 0, ciHigh: 0, pValue: 1 });
  });

  it('Run.comparison needs two runs over the same dataset', async () => {
    const error = failure(
      await t.gql(`query ($r: ID!, $b: ID!) { node(id: $r) { ... on Run { comparison(baselineRunId: $b) { macroAverage { value } } } } }`, {
        r: runOf('qwen-32b', 'PROMPT_GRAPH', 0),
        b: runOf('qwen-32b', 'ZERO_SHOT', 1),
      }),
      'BAD_USER_INPUT',
    );
    expect(error.extensions?.field).toBe('baselineRunId');
  });

  it('strategyEffects: the extraction paper §3.2 table, per model and use case, pooled, best strategy, BH across the table', async () => {
    const data = ok(
      await t.gql(
        `query ($p: ID!, $u: [ID!]!, $u0: ID!, $d0: ID!) {
          project(id: $p) { strategyEffects(useCaseIds: $u, options: { resamples: 300 }) {
            baseline comparisons topRanked { strategy count }
            rows { model { servedName } useCase { id } strategy best bestStrategies run { id } baselineRun { id } memberCount
              value { value } baselineValue { value } difference { value ciLow ciHigh pValue qValue } } } }
          uc: node(id: $u0) { ... on UseCase { leaderboard(datasetId: $d0, options: { resamples: 0 }) { entries { run { id model { servedName } } } } } }
        }`,
        { p: project.id, u: fx.useCases.map((u) => u.id), u0: fx.useCases[0]!.id, d0: fx.useCases[0]!.datasetId },
      ),
    );
    const table = data.project.strategyEffects;
    expect(table.baseline).toBe('ZERO_SHOT');
    // 3 models × (2 use cases + pooled) × (FEW_SHOT, PROMPT_GRAPH, best) + every model pooled × 3.
    expect(table.rows).toHaveLength(3 * 3 * 3 + 3);
    expect(table.comparisons).toBe(table.rows.length);
    expect(table.topRanked.reduce((s: number, x: any) => s + x.count, 0)).toBe(6);
    const scores = new Map<string, number>();
    const macro = async (id: string) => {
      if (!scores.has(id)) {
        const r = ok(await t.gql(`query ($id: ID!) { node(id: $id) { ... on Run { scores(options: { resamples: 0 }) { macroAverage { value } } } } }`, { id }));
        scores.set(id, r.node.scores.macroAverage.value);
      }
      return scores.get(id)!;
    };
    for (const row of table.rows) {
      expect(row.difference.value).toBeCloseTo(row.value.value - row.baselineValue.value, 12);
      expect(row.difference.ciLow).toBeLessThanOrEqual(row.difference.value + 1e-12);
      expect(row.difference.ciHigh).toBeGreaterThanOrEqual(row.difference.value - 1e-12);
      if (row.model && row.useCase) {
        expect(row.memberCount).toBe(1);
        expect(row.difference.value).toBeCloseTo((await macro(row.run.id)) - (await macro(row.baselineRun.id)), 12);
      }
    }
    // Pooled across use cases = mean of the two use cases' differences.
    for (const model of FIXTURE_MODELS) {
      for (const strategy of ['FEW_SHOT', 'PROMPT_GRAPH', null]) {
        const cells = table.rows.filter((r: any) => r.model?.servedName === model.name && r.strategy === strategy);
        const pooled = cells.find((r: any) => r.useCase === null);
        expect(pooled.memberCount).toBe(2);
        expect(pooled.difference.value).toBeCloseTo(mean(cells.filter((r: any) => r.useCase).map((r: any) => r.difference.value)), 12);
      }
    }
    // Every model pooled: the mean over the six model × use case cells.
    const all = table.rows.find((r: any) => r.model === null && r.strategy === 'PROMPT_GRAPH');
    const cells = table.rows.filter((r: any) => r.model && r.useCase && r.strategy === 'PROMPT_GRAPH');
    expect(all.memberCount).toBe(6);
    expect(all.difference.value).toBeCloseTo(mean(cells.map((r: any) => r.difference.value)), 12);
    // The best row of a model in a use case is its highest-placed run in that use case's leaderboard.
    const entries = data.uc.leaderboard.entries;
    for (const model of FIXTURE_MODELS) {
      const best = table.rows.find((r: any) => r.model?.servedName === model.name && r.useCase?.id === fx.useCases[0]!.id && r.best);
      expect(best.run.id).toBe(entries.find((e: any) => e.run.model.servedName === model.name).run.id);
      expect(best.bestStrategies).toHaveLength(1);
    }
    const q = bhOracle(table.rows.map((r: any) => r.difference.pValue));
    table.rows.forEach((r: any, i: number) => expect(r.difference.qValue).toBeCloseTo(q[i]!, 12));
    // The fixture's prompt graph adds 0.12 to every model's accuracy: the pooled effect is positive.
    expect(all.difference.value).toBeGreaterThan(0);
  });

  const observed = (filter: (o: FixtureObservation) => boolean) => fx.observations.filter(filter);

  it('contrast: one model against the pooled rest (Supplementary Table 5 shape), per complexity tag, cluster-robust by report', async () => {
    const query = `query ($p: ID!, $u: [ID!]!, $a: RunSelector!, $s: StratumInput) { project(id: $p) {
      contrast(useCaseIds: $u, groupA: $a, stratifyBy: $s, variableKeys: ["category"]) {
        groupA { id } groupB { id }
        overall { stratum effective { difference standardError ciLow ciHigh pValue qValue meanA meanB nA nB clusters estimable } validity { difference meanA meanB pValue } }
        strata { stratum effective { difference standardError pValue qValue meanA meanB nA nB estimable } validity { difference standardError ciLow ciHigh pValue qValue meanA meanB } }
      } } }`;
    const vars = { p: project.id, u: fx.useCases.map((u) => u.id), a: { modelIds: [fx.models['gpt-ref']] } };
    const plain = ok(await t.gql(query, vars)).project.contrast;
    expect(plain.groupA).toHaveLength(6);
    expect(plain.groupB).toHaveLength(12);
    const cat = observed((o) => o.variable === 'category');
    const ys = cat.map((o) => ({ g: o.model === 'gpt-ref' ? 1 : 0, y: o.score, c: o.report }));
    const oracle = cr1GroupSe(ys);
    expect(plain.overall.effective.difference).toBeCloseTo(oracle.beta, 12);
    expect(plain.overall.effective.standardError).toBeCloseTo(oracle.se, 12);
    expect(plain.overall.effective.meanA).toBeCloseTo(mean(ys.filter((o) => o.g === 1).map((o) => o.y)), 12);
    expect(plain.overall.effective.nA).toBe(6 * 40);
    expect(plain.overall.effective.clusters).toBe(80);
    expect(plain.overall.validity.meanB).toBeCloseTo(mean(cat.filter((o) => o.model !== 'gpt-ref').map((o) => (o.valid ? 1 : 0))), 12);
    expect(plain.strata).toEqual([]);

    const stratified = ok(await t.gql(query, { ...vars, s: { useCaseTagPrefix: 'complexity:' } })).project.contrast;
    expect(stratified.strata.map((s: any) => s.stratum)).toEqual(['complexity:low', 'complexity:high']);
    for (const s of stratified.strata) {
      const inS = cat.filter((o) => o.complexity === s.stratum);
      const a = inS.filter((o) => o.model === 'gpt-ref');
      const b = inS.filter((o) => o.model !== 'gpt-ref');
      // A stratum's own model y ~ 1 + group: its coefficient is its difference of means.
      expect(s.effective.difference).toBeCloseTo(mean(a.map((o) => o.score)) - mean(b.map((o) => o.score)), 12);
      expect(s.validity.difference).toBeCloseTo(mean(a.map((o) => (o.valid ? 1 : 0))) - mean(b.map((o) => (o.valid ? 1 : 0))), 12);
      expect(s.effective.nA).toBe(a.length);
      expect(s.effective.estimable).toBe(true);
    }
    const q = bhOracle(stratified.strata.map((s: any) => s.effective.pValue));
    stratified.strata.forEach((s: any, i: number) => expect(s.effective.qValue).toBeCloseTo(q[i]!, 12));
    expect(stratified.overall.effective.qValue).toBeNull();

    const bySchema = ok(await t.gql(query, { ...vars, s: { reportMetadata: 'scheme' } })).project.contrast;
    expect(bySchema.strata.map((s: any) => s.stratum).sort()).toEqual(['BI-RADS', 'LI-RADS', 'PI-RADS', 'TI-RADS']);
  });

  it('contrast per stratum: each stratum its own model, with its own reports as clusters, as if fitted on that stratum alone', async () => {
    const query = `query ($p: ID!, $u: [ID!]!, $a: RunSelector!, $s: StratumInput) { project(id: $p) {
      contrast(useCaseIds: $u, groupA: $a, stratifyBy: $s, variableKeys: ["category"]) {
        overall { effective { difference standardError pValue nA nB clusters } validity { difference standardError clusters } }
        strata { stratum effective { difference standardError pValue nA nB clusters estimable } validity { difference standardError clusters } }
      } } }`;
    const a = { modelIds: [fx.models['gpt-ref']] };
    const cat = observed((o) => o.variable === 'category');
    const check = (strata: any[], stratumOf: (o: FixtureObservation) => string) => {
      for (const s of strata) {
        const inS = cat.filter((o) => stratumOf(o) === s.stratum);
        const reports = new Set(inS.map((o) => o.report)).size;
        const effective = cr1GroupSe(inS.map((o) => ({ g: o.model === 'gpt-ref' ? 1 : 0, y: o.score, c: o.report })));
        const validity = cr1GroupSe(inS.map((o) => ({ g: o.model === 'gpt-ref' ? 1 : 0, y: o.valid ? 1 : 0, c: o.report })));
        expect(s.effective.clusters).toBe(reports);
        expect(s.validity.clusters).toBe(reports);
        expect(s.effective.standardError).toBeCloseTo(effective.se, 12);
        expect(s.validity.standardError).toBeCloseTo(validity.se, 12);
      }
    };
    const u = fx.useCases.map((x) => x.id);
    const byComplexity = ok(await t.gql(query, { p: project.id, u, a, s: { useCaseTagPrefix: 'complexity:' } })).project.contrast;
    expect(byComplexity.strata).toHaveLength(2);
    check(byComplexity.strata, (o) => o.complexity);
    const byScheme = ok(await t.gql(query, { p: project.id, u, a, s: { reportMetadata: 'scheme' } })).project.contrast;
    expect(byScheme.strata).toHaveLength(4);
    check(byScheme.strata, (o) => o.scheme);
    // An analyst who keeps one use case and fits the same regression gets the stratum's numbers.
    for (const useCase of fx.useCases) {
      const alone = ok(await t.gql(query, { p: project.id, u: [useCase.id], a, s: null })).project.contrast.overall;
      const stratum = byComplexity.strata.find((s: any) => s.stratum === useCase.complexity);
      expect(stratum.effective.clusters).toBe(alone.effective.clusters);
      expect(stratum.effective.difference).toBeCloseTo(alone.effective.difference, 12);
      expect(stratum.effective.standardError).toBeCloseTo(alone.effective.standardError, 12);
      expect(stratum.effective.pValue).toBeCloseTo(alone.effective.pValue, 12);
      expect(stratum.validity.standardError).toBeCloseTo(alone.validity.standardError, 12);
    }
  });

  it('contrast: thinking against non-thinking and guided against zero-shot', async () => {
    const query = `query ($p: ID!, $u: [ID!]!, $a: RunSelector!, $b: RunSelector) { project(id: $p) {
      contrast(useCaseIds: $u, groupA: $a, groupB: $b) { groupA { id } groupB { id } overall { effective { difference meanA meanB } validity { difference meanA meanB } } } } }`;
    const u = fx.useCases.map((x) => x.id);
    const thinking = ok(await t.gql(query, { p: project.id, u, a: { reasoningMode: 'THINKING' }, b: { reasoningMode: 'NON_THINKING' } })).project.contrast;
    expect(thinking.groupB).toHaveLength(6);
    const all = fx.observations;
    expect(thinking.overall.effective.meanB).toBeCloseTo(mean(all.filter((o) => !o.thinking).map((o) => o.score)), 12);
    expect(thinking.overall.effective.difference).toBeCloseTo(
      mean(all.filter((o) => o.thinking).map((o) => o.score)) - mean(all.filter((o) => !o.thinking).map((o) => o.score)),
      12,
    );
    const guided = ok(await t.gql(query, { p: project.id, u, a: { guided: true }, b: { guided: false } })).project.contrast;
    expect(guided.groupA).toHaveLength(12);
    expect(guided.overall.validity.meanA).toBeCloseTo(mean(all.filter((o) => o.guided).map((o) => (o.valid ? 1 : 0))), 12);
    const both = failure(await t.gql(query, { p: project.id, u, a: { guided: true }, b: { strategies: ['FEW_SHOT'] } }), 'BAD_USER_INPUT');
    expect(both.extensions?.field).toBe('groupB');
  });

  it('stratifiedResults: validity, effective and conditional scores and invalid outputs by size bin and complexity', async () => {
    const data = ok(
      await t.gql(
        `query ($p: ID!, $u: [ID!]!) { project(id: $p) {
          stratifiedResults(useCaseIds: $u, groupBy: { by: SIZE_BIN, sizeBinEdges: [1, 10, 100] }, stratifyBy: { useCaseTagPrefix: "complexity:" }, options: { resamples: 200 }) {
            group stratum runCount predictions valid validity { value ciLow ciHigh } effective { value ciLow ciHigh } conditional { value } invalid { category count } } } }`,
        { p: project.id, u: fx.useCases.map((x) => x.id) },
      ),
    );
    const rows = data.project.stratifiedResults;
    const binOf: Record<string, string> = { 'gemma-1b': '≤1B', 'qwen-32b': '10B–100B', 'gpt-ref': '>100B' };
    expect(new Set(rows.map((r: any) => r.group))).toEqual(new Set(Object.values(binOf)));
    for (const row of rows) {
      const obs = fx.observations.filter((o) => binOf[o.model] === row.group && (row.stratum === null || o.complexity === row.stratum));
      expect(row.predictions).toBe(obs.length);
      expect(row.valid).toBe(obs.filter((o) => o.valid).length);
      expect(row.validity.value).toBeCloseTo(row.valid / row.predictions, 12);
      expect(row.effective.value).toBeCloseTo(mean(obs.map((o) => o.score)), 12);
      expect(row.conditional.value).toBeCloseTo(mean(obs.filter((o) => o.valid).map((o) => o.score)), 12);
      expect(row.runCount).toBe(row.stratum === null ? 6 : 3);
      expect(row.effective.ciLow).toBeLessThanOrEqual(row.effective.value);
      expect(row.effective.ciHigh).toBeGreaterThanOrEqual(row.effective.value);
      const invalid = obs.filter((o) => !o.valid).length;
      expect(row.invalid.reduce((s: number, x: any) => s + x.count, 0)).toBe(invalid);
    }
    const failureRows = await t.gql(
      `query ($p: ID!, $u: [ID!]!) { project(id: $p) { stratifiedResults(useCaseIds: $u, groupBy: { by: FAMILY }, stratifyBy: { useCase: true, variable: true }) { group } } }`,
      { p: project.id, u: fx.useCases.map((x) => x.id) },
    );
    expect(failure(failureRows, 'BAD_USER_INPUT').extensions?.field).toBe('stratifyBy');
  });

  it('MODEL-level leaderboard, consensus across use cases and group summaries agree with a brute force over the best runs', async () => {
    const perms = (n: number): number[][] =>
      n === 0 ? [[]] : perms(n - 1).flatMap((p) => Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
    const same = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
    /** Optimal orders' score by brute force, and the optimum chosen by macro average (within tolerance), then name. */
    const brute = (voters: number[][], macro: number[], names: string[]) => {
      let best: { order: number[]; score: number } | null = null;
      const key = (order: number[]) => order.map((c) => [macro[c]!, names[c]!] as const);
      const before = (x: number[], y: number[]) => {
        for (let p = 0; p < x.length; p++) {
          const [ma, na] = key(x)[p]!;
          const [mb, nb] = key(y)[p]!;
          if (!same(ma, mb)) return ma > mb;
          if (na !== nb) return na < nb;
        }
        return false;
      };
      for (const order of perms(names.length)) {
        let score = 0;
        for (const v of voters) for (let p = 0; p < order.length; p++) for (let q = p + 1; q < order.length; q++) {
          const a = v[order[p]!]!;
          const b = v[order[q]!]!;
          if (b > a && !same(a, b)) score++;
        }
        if (!best || score < best.score || (score === best.score && before(order, best.order))) best = { order, score };
      }
      return best!;
    };
    const leaderboards = await Promise.all(
      fx.useCases.map(async (u) =>
        ok(
          await t.gql(
            `query ($u: ID!, $d: ID!) { node(id: $u) { ... on UseCase {
              runs: leaderboard(datasetId: $d, options: { resamples: 0 }) { entries { run { id name model { servedName } scores(options: { resamples: 0 }) { macroAverage { value } variables { estimate { value } } } } } }
              models: leaderboard(datasetId: $d, level: MODEL, options: { resamples: 100 }) { score entries { rank rankCiLow rankCiHigh model { servedName } run { id } macroAverage { value } } } } } }`,
            { u: u.id, d: u.datasetId },
          ),
        ).node,
      ),
    );
    const bestRuns = leaderboards.map((lb) => {
      const seen = new Map<string, any>();
      for (const e of lb.runs.entries) if (!seen.has(e.run.model.servedName)) seen.set(e.run.model.servedName, e.run);
      return seen;
    });
    leaderboards.forEach((lb, u) => {
      const names = [...bestRuns[u]!.keys()].sort();
      const runs = names.map((m) => bestRuns[u]!.get(m));
      const voters = [0, 1].map((v) => runs.map((r) => r.scores.variables[v].estimate.value));
      const macro = runs.map((r) => r.scores.macroAverage.value);
      // Tie-break names as the server orders them (run name first), so compare by the runs' names.
      const expected = brute(voters, macro, runs.map((r) => r.name));
      expect(lb.models.entries.map((e: any) => e.model.servedName)).toEqual(expected.order.map((c) => names[c]));
      expect(lb.models.score).toBe(expected.score);
      lb.models.entries.forEach((e: any) => {
        expect(e.run.id).toBe(bestRuns[u]!.get(e.model.servedName).id);
        expect(e.rankCiLow).toBeLessThanOrEqual(e.rank);
        expect(e.rankCiHigh).toBeGreaterThanOrEqual(e.rank);
      });
    });
    const consensus = ok(
      await t.gql(
        `query ($p: ID!, $u: [ID!]!) { project(id: $p) {
          consensusRanking(useCaseIds: $u, level: MODEL, voters: USE_CASES, options: { resamples: 0 }) { score voterCount entries { model { servedName } macroAverage { value } } }
          groupSummary(useCaseIds: $u, groupBy: FAMILY, options: { resamples: 100 }) { group memberCount estimate { value ciLow ciHigh } models { servedName } } } }`,
        { p: project.id, u: fx.useCases.map((u) => u.id) },
      ),
    ).project;
    const names = FIXTURE_MODELS.map((m) => m.name).sort();
    const perUseCase = bestRuns.map((b) => names.map((m) => b.get(m).scores.macroAverage.value as number));
    const meanMacro = names.map((_, c) => mean(perUseCase.map((v) => v[c]!)));
    const expected = brute(perUseCase, meanMacro, names);
    expect(consensus.consensusRanking.voterCount).toBe(2);
    expect(consensus.consensusRanking.score).toBe(expected.score);
    expect(consensus.consensusRanking.entries.map((e: any) => e.model.servedName)).toEqual(expected.order.map((c) => names[c]));
    consensus.consensusRanking.entries.forEach((e: any) => expect(e.macroAverage.value).toBeCloseTo(meanMacro[names.indexOf(e.model.servedName)]!, 12));
    // One model per family: a group's estimate is its model's mean best-run macro average over the use cases.
    expect(consensus.groupSummary.map((g: any) => g.group)).toEqual(['gemma', 'gpt', 'qwen']);
    for (const g of consensus.groupSummary) {
      const model = FIXTURE_MODELS.find((m) => m.family === g.group)!.name;
      expect(g.memberCount).toBe(2);
      expect(g.models.map((m: any) => m.servedName)).toEqual([model]);
      expect(g.estimate.value).toBeCloseTo(meanMacro[names.indexOf(model)]!, 12);
      expect(g.estimate.ciLow).toBeLessThanOrEqual(g.estimate.value);
    }
  });
});
