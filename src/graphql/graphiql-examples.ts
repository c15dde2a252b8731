/**
 * Example operations offered in GraphiQL (the Examples menu, `/graphql?example=<name>`), an
 * analyst's first queries. Each runs on the demo data; a test keeps them valid against the live
 * schema and runs them on the seeded demo.
 *
 * Variables are written with slots (`"$useCaseId"`): GraphiQL fills them from the ids the key
 * can see (EXAMPLE_IDS_QUERY, pickExampleIds, exampleVariables), so an example opens ready to run.
 */

export type ExampleSlot = 'projectId' | 'useCaseId' | 'useCaseIds' | 'radsUseCaseIds' | 'datasetId' | 'runId' | 'modelIds' | 'experimentId';

export interface GraphiqlExample {
  /** URL name: /graphql?example=<name>. */
  name: string;
  title: string;
  query: string;
  /** Variable values; a string "$<slot>" is replaced by an id the key can see. */
  variables: Record<string, unknown>;
}

export type ExampleIds = Partial<Record<ExampleSlot, string | string[]>>;

export const EXAMPLE_IDS_QUERY = `query ExampleIds {
  projects(first: 20) {
    nodes {
      id
      useCases(first: 50) { nodes { id tags datasets(first: 1) { nodes { id } } runs(first: 1) { totalCount nodes { id } } } }
      models(first: 50) { nodes { id endpoint { id } } }
      experiments(first: 1) { nodes { id } }
    }
  }
}`;

const ESTIMATE = 'value ciLow ciHigh';

export const GRAPHIQL_EXAMPLES: GraphiqlExample[] = [
  {
    name: 'first-look',
    title: 'First look: projects, use cases, datasets, runs',
    query: `# The key you use, and what it can see.
query FirstLook {
  viewer { serverAdmin role project { name } }
  projects(first: 5) {
    totalCount
    nodes {
      id
      name
      useCases(first: 10) {
        nodes {
          id
          name
          language
          variables { key type options }
          datasets(first: 5) { nodes { id name reportCount annotators { name kind isReference } } }
          runs(first: 10) { totalCount nodes { id name source status strategy model { servedName } } }
        }
      }
    }
  }
}
`,
    variables: {},
  },
  {
    name: 'leaderboard',
    title: 'Leaderboard with rank intervals',
    query: `# Runs ranked by Kemeny–Young over the variables, with bootstrap intervals
# of the macro average and of the rank.
query Leaderboard($useCaseId: ID!, $datasetId: ID!) {
  useCase: node(id: $useCaseId) {
    ... on UseCase {
      name
      leaderboard(datasetId: $datasetId, level: RUN, options: { resamples: 1000, seed: 42 }) {
        method
        exact
        voterCount
        entries {
          rank
          rankCiLow
          rankCiHigh
          strategy
          model { servedName sizeClass }
          run { name }
          macroAverage { ${ESTIMATE} }
        }
      }
    }
  }
}
`,
    variables: { useCaseId: '$useCaseId', datasetId: '$datasetId' },
  },
  {
    name: 'model-vs-humans',
    title: 'A model against the human ceiling, per variable',
    query: `# Each variable's score next to the agreement between the human annotators.
query ModelVersusHumans($runId: ID!) {
  run: node(id: $runId) {
    ... on Run {
      name
      model { servedName }
      scores {
        reference { name }
        macroAverage { ${ESTIMATE} }
        validity
        variables {
          variable { key type }
          metric
          n
          estimate { ${ESTIMATE} }
          interRaterAgreement { ${ESTIMATE} }
          validity
        }
      }
    }
  }
}
`,
    variables: { runId: '$runId' },
  },
  {
    name: 'inter-rater-agreement',
    title: 'Agreement between the annotators',
    query: `# Inter-rater agreement per variable and per pair of annotators.
query InterRaterAgreement($datasetId: ID!) {
  dataset: node(id: $datasetId) {
    ... on Dataset {
      name
      annotators { name kind isReference }
      interRaterAgreement {
        annotators { name }
        macroAverage { ${ESTIMATE} }
        variables {
          variable { key }
          metric
          estimate { ${ESTIMATE} }
          pairs { a { name } b { name } n value }
        }
      }
    }
  }
}
`,
    variables: { datasetId: '$datasetId' },
  },
  {
    name: 'heatmap',
    title: 'Heatmap data: runs × variables, with the agreement row',
    query: `# One row per run (its macro average and per-variable scores), and the
# annotators' agreement as the last row.
query Heatmap($useCaseId: ID!, $datasetId: ID!) {
  useCase: node(id: $useCaseId) {
    ... on UseCase {
      name
      variables { key }
      runs(first: 20, filter: { datasetId: $datasetId }) {
        nodes {
          name
          strategy
          model { servedName }
          scores(options: { resamples: 200 }) {
            macroAverage { ${ESTIMATE} }
            variables { variable { key } estimate { value } }
          }
        }
      }
    }
  }
  agreement: node(id: $datasetId) {
    ... on Dataset {
      interRaterAgreement(options: { resamples: 200 }) { variables { variable { key } estimate { value } } }
    }
  }
}
`,
    variables: { useCaseId: '$useCaseId', datasetId: '$datasetId' },
  },
  {
    name: 'invalid-outputs',
    title: 'Invalid outputs: validity, taxonomy and the predictions behind them',
    query: `# How often the model's answer could not be used, by category, and examples.
query InvalidOutputs($runId: ID!) {
  run: node(id: $runId) {
    ... on Run {
      name
      scores(options: { resamples: 0 }) {
        validity
        invalid { category count }
        variables { variable { key } validity invalid { category count } }
      }
      predictions(first: 5, filter: { hasInvalid: true }) {
        totalCount
        nodes {
          report { externalId }
          finishReason
          raw
          fields { key value valid invalidCategory }
        }
      }
    }
  }
}
`,
    variables: { runId: '$runId' },
  },
  {
    name: 'ranking-across-use-cases',
    title: 'Ranking of the models across use cases',
    query: `# Kemeny–Young consensus over the use cases (each use case votes).
query RankingAcrossUseCases($projectId: ID!, $useCaseIds: [ID!]!) {
  project(id: $projectId) {
    name
    consensusRanking(useCaseIds: $useCaseIds, level: MODEL, voters: USE_CASES, options: { resamples: 200 }) {
      method
      exact
      voterCount
      entries { rank rankCiLow rankCiHigh model { servedName } macroAverage { ${ESTIMATE} } }
    }
  }
}
`,
    variables: { projectId: '$projectId', useCaseIds: '$useCaseIds' },
  },
  {
    name: 'size-classes',
    title: 'Results by model size class',
    query: `# Models grouped by size class (set parameterCountB with updateModel).
query SizeClasses($projectId: ID!, $useCaseIds: [ID!]!) {
  project(id: $projectId) {
    groupSummary(useCaseIds: $useCaseIds, groupBy: SIZE_CLASS, options: { resamples: 200 }) {
      group
      memberCount
      estimate { ${ESTIMATE} }
      models { servedName parameterCountB }
    }
    # general-purpose against medical models
    specialisation: groupSummary(useCaseIds: $useCaseIds, groupBy: SPECIALISATION, options: { resamples: 200 }) {
      group
      memberCount
      estimate { ${ESTIMATE} }
    }
  }
}
`,
    variables: { projectId: '$projectId', useCaseIds: '$useCaseIds' },
  },
  {
    name: 'strategy-effects',
    title: 'Strategy effects against zero-shot',
    query: `# Each strategy (and each model's best strategy) minus zero-shot, per model and
# use case and pooled, with intervals and q-values; how often each strategy was best.
query StrategyEffects($projectId: ID!, $useCaseIds: [ID!]!) {
  project(id: $projectId) {
    strategyEffects(useCaseIds: $useCaseIds, baseline: ZERO_SHOT, options: { resamples: 200 }) {
      baseline
      comparisons
      topRanked { strategy count }
      rows {
        model { servedName }
        useCase { name }
        strategy
        best
        bestStrategies
        memberCount
        value { ${ESTIMATE} }
        difference { value ciLow ciHigh qValue }
      }
    }
  }
}
`,
    variables: { projectId: '$projectId', useCaseIds: '$useCaseIds' },
  },
  {
    name: 'rads-validity',
    title: 'RADS: validity and accuracy by model size and scheme complexity',
    query: `# The RADS paper's tables: validity, effective and conditional accuracy by size bin
# and complexity bin, and guided against zero-shot prompting.
query RadsValidity($projectId: ID!, $radsUseCaseIds: [ID!]!) {
  project(id: $projectId) {
    bySize: stratifiedResults(
      useCaseIds: $radsUseCaseIds
      groupBy: { by: SIZE_BIN, sizeBinEdges: [1, 10, 29, 100] }
      stratifyBy: { useCaseTagPrefix: "complexity:" }
      options: { resamples: 200 }
    ) {
      group
      stratum
      predictions
      validity { ${ESTIMATE} }
      effective { ${ESTIMATE} }
      conditional { ${ESTIMATE} }
      invalid { category count }
    }
    byPrompting: stratifiedResults(useCaseIds: $radsUseCaseIds, groupBy: { by: GUIDANCE }, options: { resamples: 200 }) {
      group
      predictions
      validity { ${ESTIMATE} }
      effective { ${ESTIMATE} }
    }
  }
}
`,
    variables: { projectId: '$projectId', radsUseCaseIds: '$radsUseCaseIds' },
  },
  {
    name: 'variance',
    title: 'What the variance comes from: model, strategy, residual',
    query: `# REML variance decomposition of the per-report scores.
query Variance($useCaseId: ID!, $datasetId: ID!) {
  useCase: node(id: $useCaseId) {
    ... on UseCase {
      varianceDecomposition(datasetId: $datasetId) {
        observations
        converged
        components { name levelCount share }
        residualShare
        warnings
      }
    }
  }
}
`,
    variables: { useCaseId: '$useCaseId', datasetId: '$datasetId' },
  },
  {
    name: 'throughput',
    title: 'Throughput and tokens per run',
    query: `# Tokens, latency and speed of each run. Imported runs (the demo's) carry tokens and
# latency percentiles; speed needs an executed run (start one on the demo model server).
query Throughput($useCaseId: ID!) {
  useCase: node(id: $useCaseId) {
    ... on UseCase {
      runs(first: 50) {
        nodes {
          name
          source
          status
          model { servedName endpoint { name gpuCount } }
          progress { total succeeded failed elapsedMs }
          usage { promptTokens completionTokens latencyP50Ms latencyP95Ms secondsPerReport tokensPerSecond tokensPerSecondPerGpu }
        }
      }
    }
  }
}
`,
    variables: { useCaseId: '$useCaseId' },
  },
  {
    name: 'charts',
    title: "Charts: the papers' figures as Vega-Lite specifications",
    query: `# Each field is a Vega-Lite specification with its data inline (vega-embed draws it).
# The same charts as SVG, for an <img>: GET /charts/use-cases/{id}/heatmap.svg?datasetId=…
# (Authorization header, or a URL signed by chartImageUrl(path:)); see docs/exports-and-charts.md.
query Charts($projectId: ID!, $useCaseId: ID!, $datasetId: ID!, $useCaseIds: [ID!]!) {
  useCase: node(id: $useCaseId) {
    ... on UseCase {
      heatmapChart(datasetId: $datasetId, options: { resamples: 200 })
      leaderboardChart(datasetId: $datasetId, level: MODEL, options: { resamples: 200 })
    }
  }
  project(id: $projectId) {
    rankingChart(useCaseIds: $useCaseIds, options: { resamples: 200 })
    throughputChart(useCaseIds: $useCaseIds, strategy: FEW_SHOT)
    modelSizeChart(useCaseIds: $useCaseIds)
  }
}
`,
    variables: { projectId: '$projectId', useCaseId: '$useCaseId', datasetId: '$datasetId', useCaseIds: '$useCaseIds' },
  },
  {
    name: 'register-endpoint',
    title: 'Register an OpenAI-compatible endpoint',
    query: `# Probes <baseUrl>/models and lists the models it serves.
mutation RegisterEndpoint($input: RegisterEndpointInput!) {
  registerEndpoint(input: $input) {
    endpoint { id name health { status lastError } }
    models { id servedName maxModelLen }
  }
}
`,
    variables: { input: { projectId: '$projectId', name: 'local endpoint', baseUrl: 'http://127.0.0.1:8001/v1', kind: 'VLLM', maxConcurrency: 4 } },
  },
  {
    name: 'start-experiment',
    title: 'Start an experiment (models × strategies)',
    query: `# One run per model × strategy over the dataset; follow it with the
# watch-experiment example.
mutation StartExperiment($input: StartExperimentInput!) {
  startExperiment(input: $input) {
    experiment { id name progress { runs total fraction } }
    runs { id name status strategy model { servedName } }
  }
}
`,
    variables: { input: { datasetId: '$datasetId', name: 'first experiment', modelIds: '$modelIds', strategies: ['ZERO_SHOT', 'FEW_SHOT'] } },
  },
  {
    name: 'watch-experiment',
    title: 'Watch an experiment (subscription)',
    query: `# The current state first, then every change, until every run is over.
subscription WatchExperiment($experimentId: ID!) {
  experimentProgress(experimentId: $experimentId) {
    experiment { name }
    progress { runs running succeeded partial failed total predictionsSucceeded predictionsFailed fraction finished }
  }
}
`,
    variables: { experimentId: '$experimentId' },
  },
];

/*
 * The two functions below also run in the browser (their source is embedded in the GraphiQL
 * page): self-contained, plain JavaScript once the types are stripped.
 */

/** The ids examples use, from EXAMPLE_IDS_QUERY's answer: the first project with scored data, its use case with the most runs. */
export function pickExampleIds(data: unknown): ExampleIds {
  const projects = ((data as { projects?: { nodes?: unknown[] } } | null)?.projects?.nodes ?? []) as {
    id: string;
    useCases?: { nodes?: { id: string; tags?: string[]; datasets?: { nodes?: { id: string }[] }; runs?: { totalCount?: number; nodes?: { id: string }[] } }[] };
    models?: { nodes?: { id: string; endpoint?: { id: string } | null }[] };
    experiments?: { nodes?: { id: string }[] };
  }[];
  const useCasesOf = (p: (typeof projects)[number]) => p.useCases?.nodes ?? [];
  const scored = (u: ReturnType<typeof useCasesOf>[number]) => (u.datasets?.nodes ?? []).length > 0 && (u.runs?.nodes ?? []).length > 0;
  const project = projects.find((p) => useCasesOf(p).some(scored)) ?? projects.find((p) => useCasesOf(p).length > 0) ?? projects[0];
  const ids: ExampleIds = {};
  if (!project) return ids;
  ids.projectId = project.id;
  const useCases = useCasesOf(project);
  // the scored use case with the most runs makes the richest leaderboard and heatmap
  let useCase = useCases.find(scored) ?? useCases[0];
  for (const u of useCases) {
    if (scored(u) && (u.runs?.totalCount ?? 0) > ((useCase && useCase.runs && useCase.runs.totalCount) || 0)) useCase = u;
  }
  if (useCases.length > 0) ids.useCaseIds = useCases.map((u) => u.id);
  const rads = useCases.filter((u) => (u.tags ?? []).indexOf('RADS') >= 0);
  if (rads.length > 0) ids.radsUseCaseIds = rads.map((u) => u.id);
  if (useCase) {
    ids.useCaseId = useCase.id;
    const dataset = useCase.datasets?.nodes?.[0];
    const run = useCase.runs?.nodes?.[0];
    if (dataset) ids.datasetId = dataset.id;
    if (run) ids.runId = run.id;
  }
  const served = (project.models?.nodes ?? []).filter((m) => m.endpoint);
  if (served.length > 0) ids.modelIds = served.slice(0, 2).map((m) => m.id);
  const experiment = project.experiments?.nodes?.[0];
  if (experiment) ids.experimentId = experiment.id;
  return ids;
}

/** The example's variables with its slots filled; a slot without an id stays as "<slot>" to fill in. */
export function exampleVariables(example: { variables: Record<string, unknown> }, ids: ExampleIds): Record<string, unknown> {
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string' && value.startsWith('$')) {
      const slot = value.slice(1) as ExampleSlot;
      const id = ids[slot];
      if (id !== undefined) return id;
      return slot === 'useCaseIds' || slot === 'radsUseCaseIds' || slot === 'modelIds' ? [`<${slot}>`] : `<${slot}>`;
    }
    if (Array.isArray(value)) return value.map(fill);
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = fill(v);
      return out;
    }
    return value;
  };
  return fill(example.variables) as Record<string, unknown>;
}
