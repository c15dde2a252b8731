/**
 * Import benchmark: 10,000 reports of ~2 KB (Dutch pathology prose with diacritics) through the
 * importReports GraphQL mutation of a real server on a fresh embedded PostgreSQL, once per
 * format, each into a new dataset. Reports the wall time of the HTTP request (parse, validate,
 * insert, commit) and the server's peak memory during it: the server runs in its own process
 * (import-server.ts), whose peak resident set (VmHWM, reset before each request through
 * /proc/<pid>/clear_refs) is compared with its resident set just before the request and with
 * the size of the request body.
 *
 * Each format is sent twice: inline in a JSON body (`content`), and as a GraphQL multipart
 * request (`file`), read by the import as it arrives.
 *
 * With --predictions the same is done for importPredictions instead: a run of one prediction
 * per report (JSON_COLUMN layout: the extracted object of 16 variables and a ~1 KB raw output)
 * into a dataset of that many reports, as JSONL and as CSV. Meanwhile another client asks the
 * server's /livez every 10 ms; the slowest answer is how long the import kept other requests
 * waiting. With --annotations, importAnnotations of one annotator's values of the same 16
 * variables for every report (a wide file, one column per variable), as JSONL and as CSV.
 *
 *   npm run build && node dist/bench/import/import-bench.js [--reports 10000] [--repeats 3] [--heap] [--json-only | --upload-only] [--predictions | --annotations]
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { argument } from '../support/bench-server';

/** Resident set size and its peak since the last reset, in bytes (Linux /proc). */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

async function startServer(): Promise<{ pid: number; port: number; key: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--expose-gc', path.join(__dirname, 'import-server.js'), ...(process.argv.includes('--heap') ? ['--heap'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const { port, key } = await new Promise<{ port: number; key: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { port: number; key: string }));
  });
  return {
    pid: child.pid!,
    port,
    key,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

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

interface Session {
  server: Awaited<ReturnType<typeof startServer>>;
  post(body: string | Buffer, contentType?: string): Promise<any>;
  gql(query: string, variables: Record<string, unknown>): Promise<any>;
  useCase: string;
}

const CATEGORIES = ['absent', 'present', 'uncertain', 'not assessed'];

/** The 16 variables of the --predictions use case: 12 categorical, 4 numeric. */
const PREDICTION_VARIABLES: { key: string; type: string; options?: string[] }[] = [
  ...Array.from({ length: 12 }, (_, v) => ({ key: `cat_${v}`, type: 'CATEGORICAL', options: CATEGORIES })),
  ...Array.from({ length: 4 }, (_, v) => ({ key: `num_${v}`, type: 'NUMERIC' })),
];

/** One prediction per report R000000 …: the extracted object and the raw output it came from. */
function predictionFiles(n: number): Record<'CSV' | 'JSONL', string> {
  const rows = Array.from({ length: n }, (_, i) => {
    const object: Record<string, unknown> = {};
    for (const [v, spec] of PREDICTION_VARIABLES.entries()) object[spec.key] = spec.options ? spec.options[(i * 7 + v) % spec.options.length] : ((i * 13 + v) % 97) / 4;
    const raw = `Reasoning: ${reportText(i).slice(0, 700)}\n\n${JSON.stringify(object)}`;
    return { id: `R${String(i).padStart(6, '0')}`, extracted_data: object, raw_output: raw };
  });
  const csvEscape = (s: string) => `"${s.replace(/"/g, '""')}"`;
  return {
    CSV: ['id,extracted_data,raw_output', ...rows.map((r) => [r.id, csvEscape(JSON.stringify(r.extracted_data)), csvEscape(r.raw_output)].join(','))].join('\n'),
    JSONL: rows.map((r) => JSON.stringify(r)).join('\n'),
  };
}

/** One annotator's values of the 16 variables for every report R000000 …, one column per variable. */
function annotationFiles(n: number): Record<'CSV' | 'JSONL', string> {
  const rows = Array.from({ length: n }, (_, i) => {
    const row: Record<string, unknown> = { id: `R${String(i).padStart(6, '0')}` };
    for (const [v, spec] of PREDICTION_VARIABLES.entries()) row[spec.key] = spec.options ? spec.options[(i * 5 + v) % spec.options.length] : ((i * 11 + v) % 97) / 4;
    return row;
  });
  const keys = ['id', ...PREDICTION_VARIABLES.map((v) => v.key)];
  return {
    CSV: [keys.join(','), ...rows.map((r) => keys.map((k) => String(r[k])).join(','))].join('\n'),
    JSONL: rows.map((r) => JSON.stringify(r)).join('\n'),
  };
}

/** The slowest answer of `url` while `running` holds, asked every 10 ms. */
function slowestAnswer(url: string, running: () => boolean): Promise<number> {
  return (async () => {
    let worst = 0;
    while (running()) {
      const t0 = process.hrtime.bigint();
      await fetch(url);
      worst = Math.max(worst, Number(process.hrtime.bigint() - t0) / 1e6);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return worst;
  })();
}

/** A server process on a fresh database, with a project and a use case to import into. */
async function startSession(): Promise<Session> {
  const server = await startServer();
  const post = async (body: string | Buffer, contentType = 'application/json'): Promise<any> => {
    const response = await fetch(`http://127.0.0.1:${server.port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': contentType, authorization: `Bearer ${server.key}`, 'apollo-require-preflight': 'true' },
      body: body as unknown as string,
    });
    const answer = (await response.json()) as { data?: any; errors?: unknown[] };
    if (answer.errors) throw new Error(JSON.stringify(answer.errors).slice(0, 500));
    return answer.data;
  };
  const gql = (query: string, variables: Record<string, unknown>) => post(JSON.stringify({ query, variables }));
  const project = (await gql('mutation($n: String!) { createProject(input: { name: $n }) { project { id } } }', { n: 'bench' })).createProject.project.id;
  const variables = kind() !== 'reports' ? PREDICTION_VARIABLES : [{ key: 'diagnosis', type: 'FREE_TEXT' }];
  const useCase = (
    await gql('mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }', { i: { projectId: project, name: 'bench', variables } })
  ).createUseCase.useCase.id;
  return { server, post, gql, useCase };
}

/** What the benchmark imports. */
function kind(): 'reports' | 'predictions' | 'annotations' {
  return process.argv.includes('--predictions') ? 'predictions' : process.argv.includes('--annotations') ? 'annotations' : 'reports';
}

async function main(): Promise<void> {
  const reports = argument('reports', 10_000);
  const repeats = argument('repeats', 3);
  // --fresh: every import in a server process of its own (nothing left over from an earlier import).
  const fresh = process.argv.includes('--fresh');
  let session = await startSession();
  try {
    const what = kind();
    const content: Partial<Record<'CSV' | 'JSON' | 'JSONL', string>> =
      what === 'predictions' ? predictionFiles(reports) : what === 'annotations' ? annotationFiles(reports) : files(reports);
    const formats = Object.keys(content) as ('CSV' | 'JSON' | 'JSONL')[];
    const sizes = Object.fromEntries(Object.entries(content).map(([k, v]) => [k, (Buffer.byteLength(v) / 1e6).toFixed(1)]));
    process.stdout.write(`${what}: ${reports}, file sizes (MB): ${JSON.stringify(sizes)}\n`);
    const modes = (process.argv.includes('--upload-only') ? ['upload'] : process.argv.includes('--json-only') ? ['json'] : ['json', 'upload']) as ('json' | 'upload')[];
    for (const mode of modes)
    for (const format of formats) {
      const times: number[] = [];
      const ratios: number[] = [];
      const waits: number[] = [];
      let line = '';
      for (let r = 0; r < repeats; r++) {
        if (fresh && (r > 0 || format !== formats[0] || mode !== modes[0])) {
          await session.server.stop();
          session = await startSession();
        }
        const { server, post, gql, useCase } = session;
        const dataset = (
          await gql('mutation($u: ID!, $n: String!) { createDataset(input: { useCaseId: $u, name: $n }) { dataset { id } } }', {
            u: useCase,
            n: `${mode}-${format}-${r}`,
          })
        ).createDataset.dataset.id;
        let query: string;
        let fields: Record<string, unknown>;
        if (what !== 'reports') {
          await gql('mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }', {
            i: { datasetId: dataset, format: 'JSONL', content: Array.from({ length: reports }, (_, i) => JSON.stringify({ id: `R${String(i).padStart(6, '0')}`, text: `report ${i}` })).join('\n') },
          });
          if (what === 'predictions') {
            query = 'mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { imported } }';
            fields = { datasetId: dataset, format, modelName: `bench-${r}`, strategy: 'ZERO_SHOT', layout: 'JSON_COLUMN', rawField: 'raw_output' };
          } else {
            query = 'mutation($i: ImportAnnotationsInput!) { importAnnotations(input: $i) { reports values } }';
            fields = { datasetId: dataset, format, annotatorName: `bench-${r}`, isReference: true };
          }
        } else {
          query = 'mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted dataset { reportCount } } }';
          fields = { datasetId: dataset, format, idField: 'id', textField: 'text' };
        }
        let body: string | Buffer;
        let contentType = 'application/json';
        if (mode === 'json') {
          // Bytes, not a string: fetch would encode a string body here, in this process, while the
          // /livez poller of this process waits, and count that against the server.
          body = Buffer.from(JSON.stringify({ query, variables: { i: { ...fields, content: content[format] } } }));
        } else {
          // A GraphQL multipart request: operations, map, then the file part.
          const boundary = `----reportql-bench-${r}`;
          const operations = JSON.stringify({ query, variables: { i: { ...fields, file: null } } });
          body = Buffer.concat([
            Buffer.from(
              `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations}\r\n` +
                `--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.i.file"]}\r\n` +
                `--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="import.${format.toLowerCase()}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
            ),
            Buffer.from(content[format]!),
            Buffer.from(`\r\n--${boundary}--\r\n`),
          ]);
          contentType = `multipart/form-data; boundary=${boundary}`;
        }
        const bodyBytes = Buffer.byteLength(body);
        // The server settles (its timers, the last request's garbage) before its baseline is read.
        if (process.argv.includes('--heap')) process.kill(server.pid, 'SIGUSR2');
        await new Promise((resolve) => setTimeout(resolve, 1500));
        writeFileSync(`/proc/${server.pid}/clear_refs`, '5');
        const before = memory(server.pid);
        let importing = true;
        const slowest = slowestAnswer(`http://127.0.0.1:${server.port}/livez`, () => importing);
        const started = process.hrtime.bigint();
        const result = await post(body, contentType).finally(() => {
          importing = false;
        });
        times.push(Number(process.hrtime.bigint() - started) / 1e9);
        waits.push(await slowest);
        const after = memory(server.pid);
        const ratio = (after.peak - before.rss) / bodyBytes;
        ratios.push(ratio);
        line += ` [body ${(bodyBytes / 1e6).toFixed(1)} MB, RSS before ${(before.rss / 1e6).toFixed(0)} MB, peak ${(after.peak / 1e6).toFixed(0)} MB, growth ${ratio.toFixed(1)}× body, slowest /livez ${waits[waits.length - 1]!.toFixed(0)} ms]`;
        const count = what === 'predictions' ? result.importPredictions.imported : what === 'annotations' ? result.importAnnotations.reports : result.importReports.inserted;
        if (count !== reports || (what === 'reports' && result.importReports.dataset.reportCount !== reports)) {
          throw new Error(`expected ${reports} rows, got ${JSON.stringify(result)}`);
        }
      }
      const sorted = [...times].sort((a, b) => a - b);
      const sortedRatios = [...ratios].sort((a, b) => a - b);
      process.stdout.write(
        `${format} (${mode === 'json' ? 'JSON body, content' : 'multipart upload, file'}): median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} s (runs ${times.map((t) => t.toFixed(2)).join(', ')}); peak memory growth median ${sortedRatios[Math.floor(sortedRatios.length / 2)]!.toFixed(1)}× the body; slowest /livez median ${[...waits].sort((a, b) => a - b)[Math.floor(waits.length / 2)]!.toFixed(0)} ms;${line}\n`,
      );
    }
  } finally {
    await session.server.stop();
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
