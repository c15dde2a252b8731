/**
 * Import benchmark: 10,000 reports of ~2 KB (Dutch pathology prose with diacritics) through the
 * importReports GraphQL mutation of a real server on a fresh embedded PostgreSQL, once per
 * format, each into a new dataset. Reports the wall time of the HTTP request (parse, validate,
 * insert, commit).
 *
 *   npm run build && node dist/bench/import/import-bench.js [--reports 10000] [--repeats 3]
 */
import { argument, startBenchServer } from '../support/bench-server';

const SENTENCES = [
  'Huidexcidaat van 2,4 x 1,1 cm met centraal een onregelmatig bruin-zwarte laesie.',
  'Microscopie: invasief melanoom van het oppervlakkig spreidende type, Breslow-dikte 1,2 mm.',
  'Geen ulceratie. Mitosen 2/mm². Clark-niveau IV. Eén satellietlaesie niet aangetroffen.',
  'De snijvlakken zijn vrij; de kleinste afstand tot het laterale snijvlak bedraagt 4 mm.',
  'Schildwachtklier: geen metastasen in drie coupes met immunohistochemie (SOX10, Melan-A).',
  'Conclusie: geïnfiltreerd melanoom, pT2a, radicaal verwijderd. Přítomnost metastáz neprokázána.',
  'Lymfovasculaire invasie niet aanwezig. Perineurale groei niet gezien. Regressie < 75%.',
];

function reportText(i: number): string {
  const parts: string[] = [`Verslag ${i}.`];
  let length = parts[0]!.length;
  for (let j = i; length < 2000; j++) {
    const sentence = SENTENCES[(j * 7 + i) % SENTENCES.length]!;
    parts.push(sentence);
    length += sentence.length + 1;
  }
  return parts.join(' ');
}

function files(n: number): Record<'CSV' | 'JSON' | 'JSONL', string> {
  const rows = Array.from({ length: n }, (_, i) => ({ id: `R${String(i).padStart(6, '0')}`, text: reportText(i), modality: 'pathology', year: 2020 + (i % 5) }));
  const csvEscape = (s: string) => `"${s.replace(/"/g, '""')}"`;
  return {
    CSV: ['id,text,modality,year', ...rows.map((r) => [r.id, csvEscape(r.text), r.modality, r.year].join(','))].join('\n'),
    JSON: JSON.stringify(rows),
    JSONL: rows.map((r) => JSON.stringify(r)).join('\n'),
  };
}

async function main(): Promise<void> {
  const reports = argument('reports', 10_000);
  const repeats = argument('repeats', 3);
  const server = await startBenchServer();
  const { gql } = server;

  try {
    const project = (await gql('mutation($n: String!) { createProject(input: { name: $n }) { project { id } } }', { n: 'bench' })).createProject.project.id;
    const useCase = (
      await gql(
        `mutation($p: ID!) { createUseCase(input: { projectId: $p, name: "bench", variables: [{ key: "diagnosis", type: FREE_TEXT }] }) { useCase { id } } }`,
        { p: project },
      )
    ).createUseCase.useCase.id;
    const content = files(reports);
    const sizes = Object.fromEntries(Object.entries(content).map(([k, v]) => [k, (Buffer.byteLength(v) / 1e6).toFixed(1)]));
    process.stdout.write(`reports: ${reports}, file sizes (MB): ${JSON.stringify(sizes)}\n`);
    for (const format of ['CSV', 'JSON', 'JSONL'] as const) {
      const times: number[] = [];
      for (let r = 0; r < repeats; r++) {
        const dataset = (
          await gql('mutation($u: ID!, $n: String!) { createDataset(input: { useCaseId: $u, name: $n }) { dataset { id } } }', {
            u: useCase,
            n: `${format}-${r}`,
          })
        ).createDataset.dataset.id;
        const started = process.hrtime.bigint();
        const result = await gql(
          'mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted dataset { reportCount } } }',
          { i: { datasetId: dataset, format, content: content[format], idField: 'id', textField: 'text' } },
        );
        times.push(Number(process.hrtime.bigint() - started) / 1e9);
        if (result.importReports.inserted !== reports || result.importReports.dataset.reportCount !== reports) {
          throw new Error(`expected ${reports} reports, got ${JSON.stringify(result)}`);
        }
      }
      const sorted = [...times].sort((a, b) => a - b);
      process.stdout.write(`${format}: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} s (runs ${times.map((t) => t.toFixed(2)).join(', ')})\n`);
    }
  } finally {
    await server.close();
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
