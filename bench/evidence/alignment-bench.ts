/**
 * Evidence alignment (METRICS.md §10): 20 quotes against one 100,000-character report, the
 * report normalised once per call as a prediction's alignment does it. The quotes are a mix a
 * model gives: verbatim, with changed case and whitespace, slightly wrong, and invented. Prints
 * the statuses, the wall and CPU time of the whole call (index + quotes) and of its parts with
 * the load average, then the CPU time of each quote alone on the built index.
 *
 *   npm run bench:evidence -- [--repeats 200] [--chars 100000]
 */
import { loadavg } from 'node:os';
import { alignmentIndex, alignQuote, alignQuotes } from '../../src/extraction/evidence-alignment';

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

const SENTENCES = [
  'Macroscopie: huidexcisie van 4,2 x 1,8 cm met centraal een gepigmenteerde laesie van 0,9 cm.',
  'Microscopie: oppervlakkig spreidend melanoom, Breslow-dikte 1,2 mm, Clark level IV.',
  'Geen ulceratie; mitotische activiteit 2 per mm², geen satellietmetastasen.',
  'Snijvlakken vrij, kleinste marge 4 mm (lateraal).',
  'Závěr: invazivní karcinom prsu, stupeň 2, pT2 N0 (0/3), estrogenové receptory pozitivní.',
  'Lymfklier uit de oksel met geïsoleerde tumorcellen, zie ook aanvullend onderzoek.',
  'Beoordeling ☺ conform eerdere biopten; patiënte is geïnformeerd.',
  'Thorax CT: nodule in de rechter bovenkwab van 8 mm, Lung-RADS 4A geadviseerd.',
];

const WORDS = (
  'de het een van met zonder geen wel links rechts ventraal dorsaal tumor laesie nodule cyste marge snijvlak ' +
  'huid dermis epidermis oksel klier lymfklier kwab long lever nier borst prsu karcinom melanoom naevus ' +
  'invazivní stupeň závěr receptory pozitivní negativní patiënt patiënte geëxcideerd beoordeling conform ' +
  'eerder biopt onderzoek aanvullend afwijking verdacht benigne maligne infiltratie ulceratie mitosen'
).split(' ');

/** Sentences of the templates with their numbers and some words drawn anew each time, so that no long stretch repeats. */
function report(chars: number, rnd: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const number = (): string => (rnd() * 40).toFixed(1).replace('.', ',');
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const sentence =
      pick(SENTENCES).replace(/\d+(,\d+)?/g, number) +
      ' ' +
      Array.from({ length: 3 + Math.floor(rnd() * 8) }, () => pick(WORDS)).join(' ') +
      '.';
    const joint = rnd() < 0.15 ? '\n\n' : ' ';
    parts.push(sentence, joint);
    length += sentence.length + joint.length;
  }
  return parts.join('').slice(0, chars);
}

function quotes(text: string, rnd: () => number): string[] {
  const piece = (length: number): string => {
    const start = Math.floor(rnd() * (text.length - length));
    return text.slice(start, start + length);
  };
  const out: string[] = [];
  for (let i = 0; i < 8; i += 1) out.push(piece(20 + Math.floor(rnd() * 40)));
  for (let i = 0; i < 5; i += 1) out.push(piece(25 + Math.floor(rnd() * 30)).toUpperCase().replace(/ /g, '  '));
  for (let i = 0; i < 4; i += 1) {
    const chars = [...piece(30 + Math.floor(rnd() * 30))];
    chars.splice(5 + Math.floor(rnd() * 10), 1, '#');
    chars.splice(15 + Math.floor(rnd() * 10), 1);
    out.push(chars.join(''));
  }
  out.push('tumor infiltreert de dermis tot 3,4 mm diep', 'geen aanwijzingen voor maligniteit in de lever', 'BI-RADS 5, biopsie aanbevolen');
  return out;
}

function timeIt(repeats: number, f: () => void): { wall: number[]; cpuMs: number } {
  f();
  const wall: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < repeats; r += 1) {
    const t0 = process.hrtime.bigint();
    f();
    wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  return { wall: wall.sort((a, b) => a - b), cpuMs: (cpu.user + cpu.system) / 1000 / repeats };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const repeats = argument('repeats', 200);
const chars = argument('chars', 100_000);
const rnd = lcg(20261207);
const text = report(chars, rnd);
const qs = quotes(text, rnd);
const statuses = alignQuotes(text, qs).map((a) => a.status);
const counts = statuses.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
const whole = timeIt(repeats, () => alignQuotes(text, qs));
const index = alignmentIndex(text);
const indexOnly = timeIt(repeats, () => alignmentIndex(text));
const quotesOnly = timeIt(repeats, () => qs.forEach((q) => alignQuote(index, q)));
const loadAfter = loadavg().map((x) => x.toFixed(2)).join(' ');

console.log(`report: ${text.length} UTF-16 code units; quotes: ${qs.length} (${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')})`);
console.log(`node ${process.version}; load average before ${loadBefore}, after ${loadAfter}; ${repeats} repeats after one warm-up`);
console.log('| part | median wall ms | p90 wall ms | CPU ms per call |');
console.log('|---|---|---|---|');
for (const [name, t] of [['index + 20 quotes (alignQuotes)', whole], ['index alone', indexOnly], ['20 quotes on a built index', quotesOnly]] as const) {
  console.log(`| ${name} | ${quantile(t.wall, 0.5).toFixed(2)} | ${quantile(t.wall, 0.9).toFixed(2)} | ${t.cpuMs.toFixed(2)} |`);
}

console.log('\n| quote | status | code points | CPU ms per call (50 calls) |');
console.log('|---|---|---|---|');
qs.forEach((q, i) => {
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < 50; r += 1) alignQuote(index, q);
  const cpu = process.cpuUsage(cpu0);
  console.log(`| ${i + 1} | ${alignQuote(index, q).status} | ${[...q].length} | ${((cpu.user + cpu.system) / 50 / 1000).toFixed(3)} |`);
});
