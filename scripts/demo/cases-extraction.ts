/**
 * The extraction paper's six use cases (Supplementary A: Tables A2, A4, A6, A8/A9, A11, A13),
 * their variables as the paper defines them (its JSON keys, types, options, defaults and field
 * instructions), and generators of synthetic reports in each use case's language. The reports
 * are written here from templates and a seeded generator; they describe no real patient.
 */
import type { MadeReport, UseCaseGen } from './cases-types';
import type { Rng, Value, VarDef } from './lib';

const NS = 'Not specified';
const M = 'missing';
const DIRECT_TASK = (intro: string, keys: [string, string][]) =>
  `${intro}\n\`\`\`json\n{\n${keys.map(([k, v]) => `  ${JSON.stringify(k)}: ${v}`).join(',\n')}\n}\n\`\`\``;

function taskFor(intro: string, vars: VarDef[]): string {
  return DIRECT_TASK(
    intro,
    vars.map((v) => [v.key, v.type === 'LIST' ? '[]' : '""']),
  );
}

const age = (rng: Rng) => rng.int(38, 84);
const year = (rng: Rng) => rng.int(2015, 2024);
const dec = (n: number, digits = 1) => n.toFixed(digits).replace('.', ',');
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// ---------------------------------------------------------------------------------------------
// A.1 Colorectal liver metastases (Dutch), Table A2 / A3

const crlmVars: VarDef[] = [
  {
    key: 'List of liver segments resected during first surgery',
    type: 'LIST',
    description: 'Liver segments removed in the first surgery.',
    instructions:
      'List of liver segments resected during first surgery in exact format reported (e.g., "2", "4a", "5/6", "7/8") and in ascending order (e.g., ["2", "3", "4a", "5/6", "7/8"]). Preserve multiple mentions if repeated. Exclude extrahepatic organs. Leave empty if not specified.',
    default: [],
    graphStep: 1,
    ira: 0.95,
    difficulty: 0.06,
  },
  {
    key: 'Was a hemihepatectomy performed?',
    type: 'BINARY',
    description: 'Indicates whether a right or left hemihepatectomy was performed during the first surgery.',
    instructions: 'Indicate "Yes" if a right or left hemihepatectomy was performed during first surgery, else "".',
    options: ['Yes', NS],
    aliases: { ja: 'Yes' },
    default: '',
    graphStep: 1,
    ira: 0.97,
    difficulty: 0.08,
  },
  {
    key: 'Surgical resection margin (mm)',
    type: 'NUMERIC',
    description: 'Closest distance in millimetres between tumour and resection margin.',
    instructions:
      'Distance in mm between tumour and closest resection margin as described in the pathology report. Use numeric values only (e.g., 2, 5, 10). Leave as "" if not specified.',
    default: '',
    graphStep: 2,
    ira: 0.73,
    difficulty: -0.1,
  },
  {
    key: 'Radicality of liver surgery (R classification)',
    type: 'CATEGORICAL',
    description: 'Radicality classification of liver resection.',
    instructions: 'Radicality based on resection margin. "R0" if margins >1 mm or explicitly radical, "R1" if microscopic tumour at margin or ≤1 mm. Leave as "" if not mentioned.',
    options: ['R0', 'R1', NS],
    aliases: { radicaal: 'R0', irradicaal: 'R1' },
    default: '',
    graphStep: 3,
    ira: 0.92,
    difficulty: 0.05,
  },
];

const dims3 = (rng: Rng, lo: number, hi: number) => [rng.int(lo, hi), rng.int(lo, hi), rng.int(Math.max(1, lo - 3), hi)].sort((a, b) => b - a).join(' x ');

const ROMAN: Record<string, string> = { '1': 'I', '2': 'II', '3': 'III', '4': 'IV', '4a': 'IVa', '4b': 'IVb', '5': 'V', '6': 'VI', '7': 'VII', '8': 'VIII' };

function crlm(rng: Rng): MadeReport {
  const sex = rng.pick(['man', 'vrouw']);
  const primary = rng.pick(['sigmoïdcarcinoom', 'rectumcarcinoom', 'coloncarcinoom rechts', 'coecumcarcinoom', 'colon transversum carcinoom']);
  const hemi = rng.chance(0.3);
  const side = rng.pick(['rechter', 'linker'] as const);
  const segments: string[] = hemi
    ? side === 'rechter'
      ? ['5', '6', '7', '8']
      : ['2', '3', '4']
    : rng.pick([['4b'], ['6'], ['7'], ['2', '3'], ['5/6'], ['8'], ['3'], ['4a', '8'], ['6', '7'], ['7/8'], ['2'], ['5']]);
  const roman = rng.chance(0.4);
  const segText = (s: string) => (roman ? s.split('/').map((x) => ROMAN[x] ?? x).join('/') : s);
  const segList = segments.map(segText).join(segments.length > 2 ? ', ' : ' en ').replace(/, ([^,]+)$/, ' en $1');
  const nMet = rng.int(1, 3);
  const size = dec(rng.int(8, 55) / 10);
  const marginKind = rng.weighted([
    ['mm', 5],
    ['cm', 2],
    ['at-margin', 1.2],
    ['free-only', 1.2],
    ['none', 0.8],
  ] as const);
  let margin: Value = '';
  let radical: Value = '';
  let marginText = '';
  if (marginKind === 'mm') {
    const mm = rng.pick([0.5, 1, 2, 3, 4, 5, 6, 8, 12]);
    margin = mm;
    radical = mm > 1 ? 'R0' : 'R1';
    marginText = rng.pick([
      `De kleinste afstand tot het resectievlak bedraagt ${dec(mm, mm % 1 ? 1 : 0)} mm.`,
      `Tumor op ${dec(mm, mm % 1 ? 1 : 0)} mm van het geïnkte resectievlak.`,
      `Marge tot resectievlak: ${dec(mm, mm % 1 ? 1 : 0)} mm.`,
    ]);
  } else if (marginKind === 'cm') {
    const cm = rng.pick([1, 1.2, 0.8, 1.5, 2]);
    margin = Math.round(cm * 10);
    radical = 'R0';
    marginText = `Het resectievlak is vrij; de kleinste marge is ${dec(cm)} cm.`;
  } else if (marginKind === 'at-margin') {
    margin = 0;
    radical = 'R1';
    marginText = rng.pick(['Tumor reikt tot in het resectievlak.', 'Tumorcellen aanwezig in het gecoaguleerde resectievlak.']);
  } else if (marginKind === 'free-only') {
    radical = 'R0';
    marginText = rng.pick(['Resectievlak vrij.', 'Het resectievlak is tumorvrij.']);
  }
  const conclusionR = radical === 'R0' && rng.chance(0.6) ? ' Radicaal verwijderd (R0).' : radical === 'R1' && rng.chance(0.6) ? ' Niet radicaal (R1).' : '';
  const procedure = hemi
    ? `${cap(side)} hemihepatectomie`
    : segments.length > 1
      ? `Segmentresectie segment ${segList}`
      : rng.pick([`Wigresectie segment ${segList}`, `Metastasectomie segment ${segList}`]);
  const weight = hemi ? `${rng.int(480, 1250)} gram` : `${rng.int(18, 160)} gram`;
  const regression = rng.pick(['', ' Uitgebreide fibrose en necrose na chemotherapie, tumorregressiegraad TRG 3.', ' Geen duidelijke therapie-effecten.', ' Beperkte regressie (TRG 4).']);
  const history = rng.chance(0.25) ? ` Eerder (${year(rng) - 6}) resectie van de primaire tumor.` : '';
  const bg = rng.pick(['Omgevend leverparenchym zonder bijzonderheden.', 'Omgevend leverweefsel met milde steatose.', 'Achtergrondlever met sinusoïdale dilatatie, passend bij oxaliplatine.']);
  const text = [
    `Klinische gegevens: ${age(rng)}-jarige ${sex}, ${primary} (${year(rng) - 1}), ${nMet === 1 ? 'een levermetastase' : `${nMet} levermetastasen`} segment ${segList}.${history} ${procedure}.`,
    '',
    `Macroscopie: ${hemi ? 'Hemihepatectomiepreparaat' : 'Leverresectaat'} van ${dims3(rng, hemi ? 12 : 3, hemi ? 22 : 11)} cm, ${weight}. Op doorsnede ${nMet === 1 ? 'een grauwwitte haard' : `${nMet} grauwwitte haarden`} met een diameter tot ${size} cm. Resectievlak geïnkt.`,
    '',
    `Microscopie: Lever met lokalisaties van een adenocarcinoom met vuile necrose, CK20-positief en CDX2-positief, passend bij metastase van het bekende colorectale carcinoom.${regression} ${marginText} ${bg}`.replace(/ +/g, ' '),
    '',
    `Conclusie: Lever, ${procedure.charAt(0).toLowerCase()}${procedure.slice(1)}: ${nMet === 1 ? 'metastase' : 'metastasen'} van colorectaal adenocarcinoom, grootste diameter ${size} cm.${conclusionR}`,
  ].join('\n');
  return {
    text,
    meta: { specimen: hemi ? 'hemihepatectomy' : 'partial resection', year: year(rng), metastases: nMet },
    truth: {
      'List of liver segments resected during first surgery': segments,
      'Was a hemihepatectomy performed?': hemi ? 'Yes' : '',
      'Surgical resection margin (mm)': margin,
      'Radicality of liver surgery (R classification)': radical,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A.2 Liver tumours (Dutch), Table A4 / A5

const yesEmpty = (key: string, description: string, instructions: string, step: number, ira: number, difficulty: number): VarDef => ({
  key,
  type: 'BINARY',
  description,
  instructions,
  options: ['Yes', NS],
  aliases: { ja: 'Yes' },
  default: '',
  graphStep: step,
  ira,
  difficulty,
});

const liverVars: VarDef[] = [
  { key: 'Number of tissue samples', type: 'NUMERIC', description: 'Total number of tissue samples described in the report.', instructions: 'The total number of tissue samples described in the report. Usually at least 1. Leave as "" if undetermined.', default: '', graphStep: 1, ira: 0.93, difficulty: 0.04 },
  { key: 'Organs', type: 'LIST', description: 'Organs from which the tissue samples were obtained.', instructions: 'List of organs the tissue samples come from, in the order mentioned.', default: [], graphStep: 1, ira: 1, difficulty: 0.1 },
  {
    key: 'Method of tissue retrieval',
    type: 'CATEGORICAL',
    description: 'Retrieval method used to obtain the specimen.',
    instructions: 'Single most specific retrieval method. Use "" if not mentioned.',
    options: ['Biopsy', 'Excision', 'Resection', 'Brush', NS],
    aliases: { biopt: 'Biopsy', naaldbiopt: 'Biopsy', biopten: 'Biopsy', excisie: 'Excision', resectie: 'Resection', resectaat: 'Resection', borstel: 'Brush', brush: 'Brush' },
    default: '',
    graphStep: 1,
    ira: 0.69,
    difficulty: -0.12,
  },
  yesEmpty('Is it an explant?', 'Indicates whether the specimen is an explantation (entire organ removed).', '"Yes" if entire organ removed (explant), else "".', 1, 0.99, 0.1),
  yesEmpty('Is it a frozen section?', 'Indicates whether a frozen section was performed.', '"Yes" if frozen section performed/mentioned, else "".', 1, 0.97, 0.08),
  { key: 'Number of liver lesion types', type: 'NUMERIC', description: 'Number of distinct liver lesion types described.', instructions: 'Number of distinct liver lesion types described. Must be ≤ Number of tissue samples.', default: '', graphStep: 2, ira: 0.94, difficulty: 0.04 },
  { key: 'Locations of tissue samples extracted from liver', type: 'LIST', description: 'Locations of liver tissue samples.', instructions: 'List of liver locations in order mentioned, preserve duplicates. Include standard and broader descriptors (e.g., "segment 6/7", "left half"). Leave empty if no location or Number of liver lesion types = 0.', default: [], graphStep: 2, ira: 0.98, difficulty: 0.06 },
  { key: 'Lesion phenotype', type: 'LIST', description: 'Tumour or lesion phenotype(s) described in the report.', instructions: 'List of lesion phenotypes in order mentioned. Preserve uncertainty ("or") and qualifiers ("(multiple)"). Leave empty if none described.', default: [], graphStep: 2, ira: 0.93, difficulty: 0.04 },
  yesEmpty('Is there metastasis?', 'Indicates whether any lesion is a metastasis.', '"Yes" if any liver lesion described as metastasis, else "".', 3, 0.96, 0.06),
  {
    key: 'Primary site of metastasis',
    type: 'FREE_TEXT',
    description: 'Primary site of the metastasis, if present.',
    instructions: 'Specify primary site if metastasis present, else leave empty.',
    default: '',
    graphStep: 4,
    dependsOn: { key: 'Is there metastasis?', values: ['Yes'] },
    ira: 0.99,
    difficulty: 0.08,
  },
  { key: 'Steatosis', type: 'FREE_TEXT', description: 'Degree of steatosis if reported.', instructions: 'Degree of steatosis if reported, beginning with "steatosis" and followed by descriptor (e.g., "steatosis mild (10%)"). Leave empty if not mentioned.', default: '', graphStep: 4, ira: 1, difficulty: 0.08 },
  yesEmpty('Presence of fibrosis', 'Indicates whether fibrosis is present.', '"Yes" if fibrosis reported, else "".', 4, 0.96, 0.05),
  { key: 'Inflammation', type: 'FREE_TEXT', description: 'Presence and description of inflammation.', instructions: 'Presence and description of inflammation if reported, beginning with "inflammation" and followed by ordered descriptors (e.g., "inflammation chronic portal moderate"). Leave empty if not mentioned.', default: '', graphStep: 4, ira: 1, difficulty: 0.08 },
];

interface LiverLesion {
  nl: string;
  en: string;
  metastasis?: string;
}
const LIVER_LESIONS: [LiverLesion, number][] = [
  [{ nl: 'hepatocellulair adenoom, HNF1A-geïnactiveerd subtype', en: 'hepatocellular adenoma, HNF1A-inactivated' }, 3],
  [{ nl: 'inflammatoir hepatocellulair adenoom', en: 'inflammatory hepatocellular adenoma' }, 2],
  [{ nl: 'hepatocellulair carcinoom, matig gedifferentieerd', en: 'hepatocellular carcinoma' }, 3],
  [{ nl: 'focale nodulaire hyperplasie', en: 'focal nodular hyperplasia' }, 2],
  [{ nl: 'metastase van adenocarcinoom, passend bij colorectale origine', en: 'metastasis of adenocarcinoma', metastasis: 'colorectal' }, 2.5],
  [{ nl: 'metastase van een neuro-endocriene tumor, primair pancreas waarschijnlijk', en: 'metastasis of neuroendocrine tumour', metastasis: 'pancreas' }, 1],
  [{ nl: 'metastase van mammacarcinoom', en: 'metastasis of breast carcinoma', metastasis: 'breast' }, 0.8],
  [{ nl: 'intrahepatisch cholangiocarcinoom', en: 'intrahepatic cholangiocarcinoma' }, 1.5],
  [{ nl: 'hemangioom', en: 'haemangioma' }, 1.2],
];
const LIVER_LOCATIONS: [string, string][] = [
  ['segment 6', 'segment 6'],
  ['segment 4b', 'segment 4b'],
  ['segment 6/7', 'segment 6/7'],
  ['segment 8', 'segment 8'],
  ['segment 2/3', 'segment 2/3'],
  ['linker leverhelft', 'left half'],
  ['rechter leverkwab', 'right lobe'],
];

function liver(rng: Rng): MadeReport {
  const kind = rng.weighted([
    ['biopsy', 5],
    ['resection', 3],
    ['explant', 1],
    ['brush', 0.6],
    ['frozen', 0.8],
  ] as const);
  const lesion = rng.weighted(LIVER_LESIONS);
  const second = rng.chance(0.2) ? rng.weighted(LIVER_LESIONS.filter(([l]) => l !== lesion && !l.metastasis)) : null;
  const lesions = second ? [lesion, second] : [lesion];
  const loc = rng.chance(0.8) ? rng.pick(LIVER_LOCATIONS) : null;
  const nSamples = kind === 'biopsy' ? rng.pick([1, 1, 2, 3]) : kind === 'resection' && rng.chance(0.3) ? 2 : 1;
  const withGb = kind === 'resection' && rng.chance(0.35);
  const organs = kind === 'brush' ? ['bile duct'] : withGb ? ['liver', 'gallbladder'] : ['liver'];
  const samples = withGb ? 2 : nSamples;
  const steatosisPct = rng.pick([null, null, 5, 10, 20, 40]);
  const steatosisWord = steatosisPct === null ? null : steatosisPct <= 5 ? 'minimal' : steatosisPct <= 20 ? 'mild' : 'moderate';
  const steatosisNl = steatosisPct === null ? '' : ` ${cap({ minimal: 'minimale', mild: 'milde', moderate: 'matige' }[steatosisWord!]!)} steatose (ca. ${steatosisPct}%).`;
  const fibrosis = kind === 'explant' || rng.chance(0.3);
  const fibrosisNl = kind === 'explant' ? ' Cirrose (METAVIR F4).' : fibrosis ? rng.pick([' Portale fibrose (F1).', ' Overbruggende fibrose (F3).', ' Geringe periportale fibrose.']) : rng.pick(['', ' Geen fibrose.']);
  const inflGrade = rng.pick([null, null, 'mild', 'moderate']);
  const inflNl = inflGrade ? ` ${inflGrade === 'mild' ? 'Milde' : 'Matige'} chronische portale ontsteking.` : '';
  const methodNl = { biopsy: nSamples > 1 ? `naaldbiopten (${nSamples}x)` : 'naaldbiopt', resection: 'resectie', explant: 'explantaat (totale hepatectomie)', brush: 'borstelcytologie', frozen: 'vriescoupe, wigexcisie' }[kind];
  const organNl = kind === 'brush' ? 'Galweg (ductus hepaticus communis)' : 'Lever';
  const lesionText = lesions.map((l) => l.nl).join(rng.pick([' en daarnaast ', '; tevens ']));
  const lines = [`Conclusie:`, `${organNl}${loc && kind !== 'brush' ? `, ${loc[0]}` : ''}, ${methodNl}: ${lesionText}.${steatosisNl}${fibrosisNl}${inflNl}`];
  if (withGb) lines.push(`Galblaas, cholecystectomie: chronische cholecystitis, geen maligniteit.`);
  if (kind === 'frozen') lines.push('Vriescoupe-uitslag telefonisch doorgegeven aan de operateur; definitieve uitslag conform.');
  if (rng.chance(0.3)) lines.push(rng.pick(['Bespreking in het MDO lever.', 'Immunohistochemie: glutaminesynthetase diffuus positief in de laesie.', 'Ter vergelijking eerder biopt herbeoordeeld.']));
  const text = `Klinische gegevens: ${age(rng)}-jarige ${rng.pick(['man', 'vrouw'])} met een ${rng.pick(['solide leverlaesie op MRI', 'toevalsbevinding in de lever', 'groeiende laesie bij surveillance', 'leverlaesie bij bekende cirrose'])}.\n\n${lines.join('\n')}`;
  const met = lesions.find((l) => l.metastasis)?.metastasis;
  return {
    text,
    meta: { specimen: kind, year: year(rng), section: 'conclusion' },
    truth: {
      'Number of tissue samples': samples,
      Organs: organs,
      'Method of tissue retrieval': { biopsy: 'Biopsy', resection: 'Resection', explant: 'Resection', brush: 'Brush', frozen: 'Excision' }[kind],
      'Is it an explant?': kind === 'explant' ? 'Yes' : '',
      'Is it a frozen section?': kind === 'frozen' ? 'Yes' : '',
      'Number of liver lesion types': kind === 'brush' ? 0 : lesions.length,
      'Locations of tissue samples extracted from liver': loc && kind !== 'brush' ? [loc[1]] : [],
      'Lesion phenotype': lesions.map((l) => l.en),
      'Is there metastasis?': met ? 'Yes' : '',
      'Primary site of metastasis': met ?? '',
      Steatosis: steatosisPct === null ? '' : `steatosis ${steatosisWord} (${steatosisPct}%)`,
      'Presence of fibrosis': fibrosis ? 'Yes' : '',
      Inflammation: inflGrade ? `inflammation chronic portal ${inflGrade}` : '',
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A.3 Neurodegenerative diseases (Dutch), Table A6 / A7

const halfSteps = (max: number) => [...Array(max * 2 + 1).keys()].map((i) => String(i / 2));
const scoreVar = (key: string, description: string, instructions: string, max: number, step: number, ira: number, difficulty: number): VarDef => ({
  key,
  type: 'CATEGORICAL',
  description,
  instructions,
  options: [...halfSteps(max), M],
  default: M,
  graphStep: step,
  ira,
  difficulty,
});
const presence = (key: string, description: string, instructions: string, step: number, ira: number, difficulty: number): VarDef => ({
  key,
  type: 'BINARY',
  description,
  instructions,
  options: ['0', '1', M],
  default: M,
  graphStep: step,
  ira,
  difficulty,
});
const count = (key: string, description: string, instructions: string, step: number, ira: number, difficulty: number): VarDef => ({
  key,
  type: 'NUMERIC',
  description,
  instructions,
  default: M,
  graphStep: step,
  ira,
  difficulty,
});

const neuroVars: VarDef[] = [
  scoreVar('Fazekas score', 'Rates severity of white matter hyperintensities (0–3 scale).', 'Return the Fazekas score (0-3). If given as a range (e.g., 1-2), return the average (e.g., 1.5). If not mentioned, return \'missing\'.', 3, 1, 0.99, 0.08),
  scoreVar('MTA left', 'Medial temporal atrophy score on the left side (0–4 scale).', 'Return the MTA score for the left side (0-4). If given as a range, return the average. If not mentioned, return \'missing\'.', 4, 1, 0.99, 0.05),
  scoreVar('MTA right', 'Medial temporal atrophy score on the right side (0–4 scale).', 'Return the MTA score for the right side (0-4). If given as a range, return the average. If not mentioned, return \'missing\'.', 4, 1, 0.99, 0.08),
  scoreVar('GCA frontal', 'Global cortical atrophy score for the frontal lobe (0–3 scale).', 'Return the GCA score of the frontal lobe (0-3). Use lobar score if available, else generalized GCA score. If not mentioned, return \'missing\'.', 3, 1, 0.92, 0.04),
  scoreVar('GCA temporal', 'Global cortical atrophy score for the temporal lobe (0–3 scale).', 'Return the GCA score of the temporal lobe (0-3). If not mentioned, return \'missing\'.', 3, 1, 0.94, 0.02),
  scoreVar('GCA parietal', 'Global cortical atrophy score for the parietal lobe (0–3 scale).', 'Return the GCA score of the parietal lobe (0-3). If not mentioned, return \'missing\'.', 3, 1, 0.93, 0.03),
  scoreVar('GCA occipital', 'Global cortical atrophy score for the occipital lobe (0–3 scale).', 'Return the GCA score of the occipital lobe (0-3). If not mentioned, return \'missing\'.', 3, 1, 0.94, -0.1),
  scoreVar('GCA overall', 'Overall cortical atrophy severity (0–3, or highest lobar score).', 'Return the overall GCA score (0-3). If only lobar scores provided, return the highest. If not mentioned, return \'missing\'.', 3, 1, 0.95, 0.04),
  presence('Any brain infarct', 'Indicates presence of any type of brain infarct.', 'Return 1 if any infarct is present, 0 if explicitly absent, \'missing\' if not mentioned.', 2, 0.88, 0.04),
  count('Total number of brain infarcts', 'Total count of all brain infarcts.', 'Return total number of infarcts. If presence confirmed but not counted, return 1. Explicitly absent = 0. If not mentioned, return \'missing\'.', 3, 0.83, -0.03),
  presence('Cortical infarcts', 'Indicates whether cortical infarcts are present.', 'Return 1 if cortical infarcts are present, 0 if absent, \'missing\' if not mentioned.', 2, 0.87, -0.02),
  count('Number of cortical infarcts', 'Count of cortical infarcts.', 'Return total number of cortical infarcts. Confirmed presence = 1, absent = 0, missing if not mentioned.', 3, 0.78, -0.04),
  presence('Lacunes infarcts', 'Indicates whether lacunar infarcts (lacunes) are present.', 'Return 1 if lacunar infarcts present, 0 if absent, \'missing\' if not mentioned.', 2, 0.92, 0.05),
  count('Number of lacunar infarcts', 'Count of lacunar infarcts.', 'Return total number of lacunar infarcts. Confirmed presence = 1, absent = 0, missing if not mentioned.', 3, 0.86, 0.01),
  presence('Cerebellar infarcts', 'Indicates whether cerebellar infarcts are present.', 'Return 1 if cerebellar infarcts present, 0 if absent, \'missing\' if not mentioned.', 2, 0.8, -0.08),
  count('Number of cerebellar infarcts', 'Count of cerebellar infarcts.', 'Return total number of cerebellar infarcts. Confirmed presence = 1, absent = 0, missing if not mentioned.', 3, 0.83, -0.18),
  presence('Splinter infarcts', 'Indicates presence of splinter infarcts.', 'Return 1 if splinter infarcts present, 0 if absent, \'missing\' if not mentioned.', 3, 0.86, -0.16),
  presence('DWI abnormalities', 'Flags restricted diffusion on DWI.', 'Return 1 if DWI shows diffusion restriction, 0 if normal, \'missing\' if not mentioned.', 4, 0.82, 0.03),
  presence('SWI abnormalities', 'Flags abnormalities detected on SWI.', 'Return 1 if SWI shows abnormalities, 0 if normal, \'missing\' if not mentioned.', 4, 0.77, -0.22),
  presence('Presence of Microbleeds', 'Indicates whether cerebral microbleeds are present.', 'Return 1 if microbleeds present, 0 if absent, \'missing\' if not mentioned.', 4, 0.85, 0.08),
  count('Total number of microbleeds', 'Count of cerebral microbleeds.', 'Return total number of microbleeds. Confirmed presence = 1, absent = 0, \'missing\' if not mentioned.', 4, 0.81, 0.06),
  { key: 'Presence of siderosis', type: 'BINARY', description: 'Indicates presence of superficial siderosis.', instructions: 'Return 1 if superficial siderosis is mentioned, 0 otherwise.', options: ['0', '1'], default: 0, graphStep: 4, ira: 0.81, difficulty: 0.02 },
];

const scoreText = (x: number) => (Number.isInteger(x) ? String(x) : rngFreeRange(x));
function rngFreeRange(x: number): string {
  return `${Math.floor(x)}-${Math.ceil(x)}`;
}

function neuro(rng: Rng): MadeReport {
  const t: Record<string, Value> = {};
  for (const v of neuroVars) t[v.key] = v.default as Value;
  const older = rng.chance(0.6);
  const mention = (p: number) => rng.chance(p);
  const parts: string[] = [];
  const fazekas = rng.weighted([[0, 1], [1, 3], [1.5, 1], [2, 2], [3, 1]] as const);
  if (mention(0.85)) {
    t['Fazekas score'] = fazekas;
    parts.push(
      fazekas === 0
        ? 'Geen witte stofafwijkingen van betekenis (Fazekas 0).'
        : rng.pick([
            `${fazekas >= 2 ? 'Confluerende' : 'Enkele punctiforme'} T2/FLAIR-hyperintense witte stofafwijkingen periventriculair en subcorticaal, Fazekas ${scoreText(fazekas)}.`,
            `Witte stof: vasculaire leuko-encefalopathie, Fazekas-score ${scoreText(fazekas)}.`,
          ]),
    );
  }
  const gca = older ? rng.pick([1, 1, 2]) : rng.pick([0, 1]);
  const lobar = rng.chance(0.35);
  if (lobar) {
    const f = gca;
    const te = Math.max(0, gca - rng.pick([0, 0, 1]));
    const p = Math.min(3, gca + rng.pick([0, 0, 1]));
    const o = rng.chance(0.5) ? Math.max(0, gca - 1) : null;
    Object.assign(t, { 'GCA frontal': f, 'GCA temporal': te, 'GCA parietal': p, 'GCA overall': Math.max(f, te, p, o ?? 0) });
    if (o !== null) t['GCA occipital'] = o;
    parts.push(`Globale corticale atrofie: frontaal ${f}, temporaal ${te}, pariëtaal ${p}${o !== null ? `, occipitaal ${o}` : ''}.`);
  } else if (mention(0.8)) {
    t['GCA overall'] = gca;
    t['GCA frontal'] = gca;
    t['GCA temporal'] = gca;
    t['GCA parietal'] = gca;
    t['GCA occipital'] = gca;
    parts.push(rng.pick([`${gca === 0 ? 'Geen' : gca === 1 ? 'Milde' : 'Matige'} globale corticale atrofie (GCA ${gca}).`, `Verwijde sulci, GCA-score ${gca}.`]));
  }
  const mtaL = older ? rng.pick([1, 1.5, 2, 3]) : rng.pick([0, 0.5, 1]);
  const mtaR = Math.max(0, mtaL - rng.pick([0, 0, 0.5, 1]));
  if (mention(0.85)) {
    t['MTA left'] = mtaL;
    t['MTA right'] = mtaR;
    parts.push(
      mtaL === mtaR
        ? `Symmetrische mediale temporale atrofie, MTA ${scoreText(mtaL)} beiderzijds.`
        : `Mediale temporale atrofie, MTA-score links ${scoreText(mtaL)} en rechts ${scoreText(mtaR)}.`,
    );
  }
  const lac = rng.weighted([[0, 5], [1, 2], [2, 1], [3, 0.5]] as const);
  const cort = rng.weighted([[0, 7], [1, 1.5], [2, 0.4]] as const);
  const cereb = rng.weighted([[0, 8], [1, 1]] as const);
  const infMention = mention(0.9);
  if (infMention) {
    const total = lac + cort + cereb;
    t['Any brain infarct'] = total > 0 ? '1' : '0';
    t['Total number of brain infarcts'] = total;
    t['Cortical infarcts'] = cort > 0 ? '1' : '0';
    t['Number of cortical infarcts'] = cort;
    t['Lacunes infarcts'] = lac > 0 ? '1' : '0';
    t['Number of lacunar infarcts'] = lac;
    if (total === 0) {
      parts.push(rng.pick(['Geen corticale of lacunaire infarcten. Cerebellum zonder afwijkingen.', 'Geen aanwijzingen voor infarcten, ook niet infratentorieel.']));
      t['Cerebellar infarcts'] = '0';
      t['Number of cerebellar infarcts'] = 0;
    } else {
      const bits: string[] = [];
      if (lac > 0) bits.push(lac === 1 ? `een lacunair infarct in de ${rng.pick(['linker thalamus', 'rechter capsula interna', 'nucleus caudatus links'])}` : `${['', '', 'twee', 'drie'][lac]} lacunaire infarcten in de basale kernen`);
      if (cort > 0) bits.push(cort === 1 ? `een oud corticaal infarct ${rng.pick(['frontaal rechts', 'pariëtaal links', 'in het stroomgebied van de a. cerebri media links'])}` : 'twee corticale infarcten occipitaal');
      if (cereb > 0) bits.push('een klein cerebellair infarct links');
      parts.push(`${cap(bits.join(', '))}.${cereb === 0 && rng.chance(0.5) ? ' Cerebellum normaal.' : ''}`);
      if (cereb > 0 || parts[parts.length - 1]!.includes('Cerebellum')) {
        t['Cerebellar infarcts'] = cereb > 0 ? '1' : '0';
        t['Number of cerebellar infarcts'] = cereb;
      }
    }
  }
  if (rng.chance(0.1)) {
    t['Splinter infarcts'] = '1';
    parts.push('Daarnaast een splinterinfarct in de centrum semiovale rechts.');
  } else if (rng.chance(0.2)) {
    t['Splinter infarcts'] = '0';
    parts.push('Geen splinterinfarcten.');
  }
  if (mention(0.8)) {
    const dwi = rng.chance(0.08);
    t['DWI abnormalities'] = dwi ? '1' : '0';
    parts.push(dwi ? 'Op DWI een klein vers infarct met diffusierestrictie pariëtaal links.' : 'Geen diffusierestrictie.');
  }
  const mb = rng.weighted([[0, 5], [1, 2], [2, 1], [4, 0.6], [12, 0.3]] as const);
  const sid = rng.chance(0.06);
  if (mention(0.8)) {
    t['Presence of Microbleeds'] = mb > 0 ? '1' : '0';
    t['Total number of microbleeds'] = mb;
    t['SWI abnormalities'] = mb > 0 || sid ? '1' : '0';
    t['Presence of siderosis'] = sid ? '1' : '0';
    parts.push(
      `SWI: ${mb === 0 ? 'geen microbloedingen' : mb === 1 ? `een microbloeding ${rng.pick(['lobair occipitaal rechts', 'in de linker thalamus', 'cerebellair'])}` : mb >= 12 ? `multipele (${mb}) lobaire microbloedingen, verdacht voor CAA` : `${['', '', 'twee', '', 'vier'][mb]} microbloedingen`}${sid ? ', superficiële siderose over de convexiteit rechts' : rng.chance(0.5) ? ', geen superficiële siderose' : ''}.`,
    );
  }
  const conclusion = [
    t['MTA left'] !== M && Number(t['MTA left']) >= 2 ? 'Mediale temporale atrofie, passend bij de klinische vraagstelling' : 'Geen disproportionele hippocampusatrofie',
    t['Fazekas score'] !== M && Number(t['Fazekas score']) >= 2 ? 'uitgebreide vasculaire schade' : 'beperkte vasculaire schade',
  ].join('; ');
  const text = [
    `MRI hersenen`,
    `Klinische gegevens: ${age(rng) + 10}-jarige ${rng.pick(['man', 'vrouw'])}, ${rng.pick(['geheugenklachten sinds twee jaar', 'progressieve cognitieve achteruitgang', 'gedragsverandering, verdenking FTD', 'woordvindstoornissen'])}. Vraagstelling: ${rng.pick(['neurodegeneratie?', 'vasculaire schade?', 'atrofiepatroon?'])}`,
    `Techniek: ${rng.pick(['3T', '1,5T'])}; sagittale 3D T1, FLAIR, T2, DWI en SWI.`,
    `Verslag: ${parts.join(' ')}${rng.chance(0.4) ? ' Geen ruimte-innemend proces. Normale flow voids.' : ''}`,
    `Conclusie: ${cap(conclusion)}.`,
  ].join('\n');
  return { text, meta: { modality: 'MRI', year: year(rng), structured: lobar } , truth: t };
}

// ---------------------------------------------------------------------------------------------
// A.4 Soft-tissue tumours (English and Dutch), Tables A8, A9, A10

const sttVars = (ira: Record<string, number>): VarDef[] => [
  {
    key: 'Specimen Type',
    type: 'CATEGORICAL',
    description: 'Type of tissue specimen obtained for analysis.',
    options: ['Biopsy', 'Resection', 'Cytology', 'Other', NS],
    aliases: { 'core biopsy': 'Biopsy', biopt: 'Biopsy', excision: 'Resection', resectie: 'Resection', excisie: 'Resection', fna: 'Cytology', cytologie: 'Cytology' },
    default: NS,
    graphStep: 1,
    ira: ira.specimen!,
    difficulty: -0.18,
  },
  {
    key: 'Pathology Request Reason',
    type: 'CATEGORICAL',
    description: 'Reason for pathology examination request.',
    options: ['Suspicion of tumour', 'Metastasis', 'Follow-up', 'Recurrent tumour', 'Reassessment', NS],
    default: NS,
    graphStep: 1,
    ira: ira.reason!,
    difficulty: -0.3,
  },
  { key: 'Disease Type', type: 'FREE_TEXT', description: 'Specific disease classification based on UMLS.', instructions: 'Short name based on Unified Medical Language System (UMLS).', default: NS, graphStep: 2, ira: ira.disease!, difficulty: 0.05 },
  { key: 'Disease Type differential diagnosis', type: 'LIST', description: 'Array of possible differential diagnoses.', instructions: 'Array of standardized possible differential diagnoses (based on UMLS).', default: [], graphStep: 2, ira: ira.ddx!, difficulty: -0.05 },
  { key: 'Is it a soft tissue tumour?', type: 'BINARY', description: 'Indicates if the specimen is a soft tissue tumour.', options: ['Yes', 'No', NS], aliases: { ja: 'Yes', nee: 'No' }, default: NS, graphStep: 2, ira: ira.stt!, difficulty: -0.02 },
  { key: 'Is it suspected or confirmed?', type: 'CATEGORICAL', description: 'Diagnostic certainty level.', options: ['Suspected', 'Confirmed', NS], default: NS, graphStep: 2, ira: ira.certainty!, difficulty: -0.15 },
  { key: 'Is it benign or malignant?', type: 'CATEGORICAL', description: 'Tumour behaviour classification.', options: ['Benign', 'Intermediate', 'Malignant', NS], aliases: { benigne: 'Benign', maligne: 'Malignant' }, default: NS, graphStep: 3, ira: ira.behaviour!, difficulty: 0.0 },
  {
    key: 'Tumour Grade',
    type: 'CATEGORICAL',
    description: 'Histological grading of the tumour.',
    instructions: 'If benign: always use "No grade". Preferred: FNCLCC grading (G1, G2, G3). Fallback: "Low-grade" or "High-grade" if FNCLCC unavailable.',
    options: ['G1', 'G2', 'G3', 'Low-grade', 'High-grade', 'No grade', NS],
    aliases: { 'grade 1': 'G1', 'grade 2': 'G2', 'grade 3': 'G3', 'graad 1': 'G1', 'graad 2': 'G2', 'graad 3': 'G3', laaggradig: 'Low-grade', hooggradig: 'High-grade' },
    default: NS,
    graphStep: 4,
    ira: ira.grade!,
    difficulty: -0.08,
  },
  { key: 'Tumour Location', type: 'FREE_TEXT', description: 'Anatomical location of the tumour.', instructions: 'Use a standard UMLS-based anatomical term (e.g., "Lung", "Breast").', default: NS, graphStep: 1, ira: ira.location!, difficulty: 0.06 },
];

interface SttEntity {
  en: string;
  nl: string;
  term: string;
  behaviour: 'Benign' | 'Intermediate' | 'Malignant';
  stt: 'Yes' | 'No';
  grades: string[];
  ddx: string[];
}
const STT: [SttEntity, number][] = [
  [{ en: 'lipoma', nl: 'lipoom', term: 'Lipoma', behaviour: 'Benign', stt: 'Yes', grades: ['No grade'], ddx: ['Atypical lipomatous tumour'] }, 3],
  [{ en: 'atypical lipomatous tumour / well-differentiated liposarcoma (MDM2 amplified)', nl: 'atypische lipomateuze tumor (MDM2-amplificatie aangetoond)', term: 'Atypical lipomatous tumour', behaviour: 'Intermediate', stt: 'Yes', grades: [NS, 'Low-grade'], ddx: ['Lipoma'] }, 2],
  [{ en: 'myxofibrosarcoma', nl: 'myxofibrosarcoom', term: 'Myxofibrosarcoma', behaviour: 'Malignant', stt: 'Yes', grades: ['G1', 'G2', 'G3'], ddx: ['Myxoma', 'Myxoid liposarcoma'] }, 2],
  [{ en: 'leiomyosarcoma', nl: 'leiomyosarcoom', term: 'Leiomyosarcoma', behaviour: 'Malignant', stt: 'Yes', grades: ['G2', 'G3'], ddx: ['Leiomyoma'] }, 1.5],
  [{ en: 'synovial sarcoma (SS18 rearrangement confirmed)', nl: 'synoviaal sarcoom (SS18-herschikking aangetoond)', term: 'Synovial sarcoma', behaviour: 'Malignant', stt: 'Yes', grades: ['G2', 'G3', 'High-grade'], ddx: ['Malignant peripheral nerve sheath tumour'] }, 1],
  [{ en: 'undifferentiated pleomorphic sarcoma', nl: 'ongedifferentieerd pleiomorf sarcoom', term: 'Undifferentiated pleomorphic sarcoma', behaviour: 'Malignant', stt: 'Yes', grades: ['G3', 'High-grade'], ddx: ['Dedifferentiated liposarcoma', 'Pleomorphic leiomyosarcoma'] }, 1.5],
  [{ en: 'schwannoma', nl: 'schwannoom', term: 'Schwannoma', behaviour: 'Benign', stt: 'Yes', grades: ['No grade'], ddx: ['Neurofibroma'] }, 1.5],
  [{ en: 'desmoid-type fibromatosis', nl: 'desmoïd-type fibromatose', term: 'Desmoid fibromatosis', behaviour: 'Intermediate', stt: 'Yes', grades: ['No grade', NS], ddx: ['Nodular fasciitis', 'Scar tissue'] }, 1.2],
  [{ en: 'myxoid liposarcoma', nl: 'myxoïd liposarcoom', term: 'Myxoid liposarcoma', behaviour: 'Malignant', stt: 'Yes', grades: ['Low-grade', 'G2'], ddx: ['Myxofibrosarcoma', 'Myxoma'] }, 1],
  [{ en: 'metastatic carcinoma, consistent with a lung primary (TTF-1 positive)', nl: 'metastase van een carcinoom, passend bij primair longcarcinoom (TTF-1 positief)', term: 'Metastatic carcinoma', behaviour: 'Malignant', stt: 'No', grades: [NS], ddx: ['Sarcomatoid carcinoma'] }, 0.8],
  [{ en: 'organising haematoma, no evidence of malignancy', nl: 'organiserend hematoom, geen aanwijzingen voor maligniteit', term: 'Hematoma', behaviour: 'Benign', stt: 'No', grades: ['No grade'], ddx: [] }, 0.7],
  [{ en: 'diffuse large B-cell lymphoma', nl: 'diffuus grootcellig B-cel lymfoom', term: 'Diffuse large B-cell lymphoma', behaviour: 'Malignant', stt: 'No', grades: [NS], ddx: [] }, 0.5],
];
const STT_SITES: [string, string, string][] = [
  ['left thigh', 'bovenbeen links', 'Left thigh'],
  ['right thigh', 'bovenbeen rechts', 'Right thigh'],
  ['right upper arm', 'bovenarm rechts', 'Right upper arm'],
  ['back', 'rug', 'Back'],
  ['retroperitoneum', 'retroperitoneum', 'Retroperitoneum'],
  ['left buttock', 'bil links', 'Left buttock'],
  ['right calf', 'kuit rechts', 'Right calf'],
  ['chest wall', 'thoraxwand', 'Chest wall'],
  ['left shoulder', 'schouder links', 'Left shoulder'],
  ['abdominal wall', 'buikwand', 'Abdominal wall'],
];
const REASONS: Record<string, [string, string]> = {
  'Suspicion of tumour': ['?sarcoma', 'verdenking sarcoom'],
  Metastasis: ['?metastasis, known carcinoma', 'metastase? bekend carcinoom'],
  'Follow-up': ['follow-up after treatment', 'controle na behandeling'],
  'Recurrent tumour': ['?local recurrence', 'verdenking recidief'],
  Reassessment: ['review of outside material', 'revisie van elders verricht onderzoek'],
};

function stt(lang: 'en' | 'nl') {
  return (rng: Rng): MadeReport => {
    const e = rng.weighted(STT);
    const site = rng.pick(STT_SITES);
    const specimen = rng.weighted([
      ['Biopsy', 5],
      ['Resection', 3],
      ['Cytology', 0.6],
      ['Other', 0.3],
    ] as const);
    const reason = rng.weighted([
      ['Suspicion of tumour', 5],
      [e.stt === 'No' ? 'Metastasis' : 'Recurrent tumour', 1],
      ['Follow-up', 0.6],
      ['Reassessment', 0.6],
      [NS, 1.2],
    ] as const);
    const suspected = specimen !== 'Resection' && (e.ddx.length > 0 && rng.chance(0.4));
    const grade = rng.pick(e.grades);
    const ddxShown = suspected ? e.ddx : [];
    const size = rng.int(15, 140);
    const cores = rng.int(2, 6);
    const gradeText = (g: string) =>
      g === NS || g === 'No grade'
        ? ''
        : lang === 'en'
          ? g.startsWith('G')
            ? `, FNCLCC grade ${g.slice(1)} (differentiation ${rng.int(1, 3)}, mitoses ${rng.int(1, 3)}, necrosis ${rng.int(0, 2)})`
            : `, ${g.toLowerCase()}`
          : g.startsWith('G')
            ? `, FNCLCC graad ${g.slice(1)}`
            : `, ${g === 'Low-grade' ? 'laaggradig' : 'hooggradig'}`;
    const specEn = { Biopsy: `${cores} core biopsies`, Resection: 'marginal excision specimen', Cytology: 'fine needle aspirate', Other: 'curettings' }[specimen];
    const specNl = { Biopsy: `${cores} naaldbiopten`, Resection: 'excisiepreparaat', Cytology: 'cytologische punctie', Other: 'curettagemateriaal' }[specimen];
    let text: string;
    if (lang === 'en') {
      const clinical = reason === NS ? `Mass ${site[0]}.` : `${rng.int(2, 12)} cm mass ${site[0]}, ${REASONS[reason]![0]}.`;
      const diag = suspected
        ? `features favour ${e.en.split(',')[0]}; differential diagnosis includes ${e.ddx.join(' and ').toLowerCase()}. Excision recommended for definitive classification`
        : `${e.en}${gradeText(grade)}`;
      text = [
        `Clinical details: ${clinical} ${rng.pick(['MRI: well-defined lesion.', 'MRI: deep-seated heterogeneous lesion.', specimen === 'Resection' ? 'Marginal excision.' : 'Ultrasound-guided procedure.', ''])}`.trim(),
        '',
        `Macroscopy: ${cap(specEn)}${specimen === 'Resection' ? ` measuring ${size} x ${Math.round(size * 0.7)} x ${Math.round(size * 0.5)} mm, margins inked` : `, the longest ${rng.int(8, 22)} mm`}. All embedded.`,
        '',
        `Microscopy: ${rng.pick(['Sections show a spindle cell lesion', 'The cores contain a lesion', 'Sections show a well-circumscribed tumour'])} ${e.behaviour === 'Benign' ? 'without atypia or mitotic activity' : e.behaviour === 'Intermediate' ? 'with scattered atypical stromal cells' : 'with marked nuclear pleomorphism, brisk mitotic activity and areas of necrosis'}.${rng.chance(0.5) ? ' Immunohistochemistry performed, see below.' : ''}`,
        '',
        `Conclusion: ${cap(site[0])}, ${specEn}: ${diag}.`,
      ].join('\n');
    } else {
      const clinical = reason === NS ? `Zwelling ${site[1]}.` : `Zwelling ${site[1]}, ${REASONS[reason]![1]}.`;
      const diag = suspected
        ? `beeld past het best bij ${e.nl.split(',')[0]}; differentiaal diagnostisch ${e.ddx.join(' of ').toLowerCase()}. Excisie geadviseerd voor definitieve typering`
        : `${e.nl}${gradeText(grade)}`;
      text = [
        `Klinische gegevens: ${clinical} ${rng.pick(['MRI: scherp begrensde laesie.', 'MRI: diep gelegen heterogene laesie.', specimen === 'Resection' ? 'Marginale excisie.' : 'Echogeleide punctie.', ''])}`.trim(),
        '',
        `Macroscopie: ${cap(specNl)}${specimen === 'Resection' ? ` van ${size} x ${Math.round(size * 0.7)} x ${Math.round(size * 0.5)} mm, snijvlakken geïnkt` : `, langste ${rng.int(8, 22)} mm`}. Geheel ingesloten.`,
        '',
        `Microscopie: ${rng.pick(['Coupes tonen een spoelcellige laesie', 'In de biopten een laesie', 'Coupes tonen een scherp begrensde tumor'])} ${e.behaviour === 'Benign' ? 'zonder atypie of mitotische activiteit' : e.behaviour === 'Intermediate' ? 'met verspreide atypische stromacellen' : 'met uitgesproken kernpleiomorfie, veel mitosen en necrose'}.`,
        '',
        `Conclusie: ${cap(site[1])}, ${specNl}: ${diag}.`,
      ].join('\n');
    }
    return {
      text,
      meta: { specimen: specimen.toLowerCase(), year: year(rng), site: site[2] },
      truth: {
        'Specimen Type': specimen,
        'Pathology Request Reason': reason,
        'Disease Type': e.term,
        'Disease Type differential diagnosis': ddxShown,
        'Is it a soft tissue tumour?': e.stt,
        'Is it suspected or confirmed?': suspected ? 'Suspected' : 'Confirmed',
        'Is it benign or malignant?': e.behaviour,
        'Tumour Grade': suspected ? NS : e.behaviour === 'Benign' ? 'No grade' : grade,
        'Tumour Location': site[2],
      },
    };
  };
}

// ---------------------------------------------------------------------------------------------
// A.5 Melanomas (Dutch), Tables A11 / A12

const yn = { ja: 'Yes', nee: 'No', aanwezig: 'Yes', afwezig: 'No' };
const ynVar = (key: string, description: string, step: number, ira: number, difficulty: number, dependsOn?: VarDef['dependsOn']): VarDef => ({
  key,
  type: 'CATEGORICAL',
  description,
  options: ['Yes', 'No', NS],
  aliases: yn,
  default: NS,
  graphStep: step,
  ...(dependsOn ? { dependsOn } : {}),
  ira,
  difficulty,
});

const melVars: VarDef[] = [
  ynVar('Primary melanoma', 'Determination of whether this is a primary melanoma case.', 1, 0.76, -0.06),
  ynVar('Report a revision', 'Indicates if this report is a revision of a previous report.', 1, 0.59, -0.45),
  ynVar('Multiple primary melanoma', 'Only applicable if Primary melanoma is "Yes". Indicates presence of multiple primary melanomas.', 2, 0.8, -0.25, { key: 'Primary melanoma', values: ['Yes'] }),
  ynVar('In situ melanoma', 'Indicates if melanoma is in situ (non-invasive).', 2, 0.8, 0.04),
  { key: 'Breslow thickness', type: 'NUMERIC', description: 'Measured thickness of melanoma in millimeters. Must be between 0.0 and 400.0 if specified.', default: NS, tolerance: 0.05, graphStep: 2, ira: 0.85, difficulty: 0.1 },
  ynVar('Ulceration', 'Presence or absence of ulceration.', 2, 0.8, 0.1),
  {
    key: 'Location of melanoma',
    type: 'CATEGORICAL',
    description: 'Anatomical location of the primary melanoma.',
    options: ['Head and Neck', 'Trunk', 'Upper extremity', 'Lower extremity', NS],
    aliases: { romp: 'Trunk', 'hoofd-hals': 'Head and Neck', 'bovenste extremiteit': 'Upper extremity', 'onderste extremiteit': 'Lower extremity' },
    default: NS,
    graphStep: 2,
    ira: 0.82,
    difficulty: 0.0,
  },
  {
    key: 'Subtype of melanoma',
    type: 'CATEGORICAL',
    description: 'Histological subtype classification.',
    options: ['Superficial spreading melanoma', 'Nodular melanoma', 'Acral melanoma', 'Desmoplastic melanoma', NS],
    aliases: { 'superficieel spreidend melanoom': 'Superficial spreading melanoma', 'nodulair melanoom': 'Nodular melanoma', 'acraal lentigineus melanoom': 'Acral melanoma', 'desmoplastisch melanoom': 'Desmoplastic melanoma' },
    default: NS,
    graphStep: 2,
    ira: 0.91,
    difficulty: 0.08,
  },
  ynVar('Microsatellites present', 'Presence of microsatellite lesions.', 2, 0.72, 0.05),
  ynVar('Mitosis described', 'Whether mitotic activity is described in report.', 2, 0.52, -0.05),
  {
    key: 'Mitosis count',
    type: 'NUMERIC',
    description: 'Number of mitoses per square millimeter. Only applicable if \'Mitosis described\' is "Yes". Must be between 0.0 and 100.0 if specified.',
    default: NS,
    graphStep: 3,
    dependsOn: { key: 'Mitosis described', values: ['Yes'] },
    ira: 0.99,
    difficulty: 0.1,
  },
  ynVar('Lymphatic invasion', 'Presence of lymphatic vessel invasion.', 3, 0.75, -0.08),
  {
    key: 'Specimen type',
    type: 'CATEGORICAL',
    description: 'Type of specimen when not primary melanoma. SLNB = Sentinel Lymph Node Biopsy, WLE = Wide Local Excision.',
    options: ['Both', 'SLNB', 'WLE', NS],
    aliases: { schildwachtklier: 'SLNB', 'sentinel node': 'SLNB', 're-excisie': 'WLE' },
    default: NS,
    graphStep: 3,
    dependsOn: { key: 'Primary melanoma', values: ['No'] },
    ira: 0.48,
    difficulty: -0.15,
  },
  ynVar('SLNB metastases present', 'Presence of metastases in sentinel lymph node. Only applicable if specimen includes SLNB.', 4, 0.6, 0.08, { key: 'Specimen type', values: ['Both', 'SLNB'] }),
  {
    key: 'SLNB tumour burden',
    type: 'NUMERIC',
    description: 'Size of metastatic deposit in sentinel node in mm. Only applicable if \'SLNB metastases present\' is "Yes". Must be between 0.01 and 200.00 if specified.',
    default: NS,
    tolerance: 0.05,
    graphStep: 5,
    dependsOn: { key: 'SLNB metastases present', values: ['Yes'] },
    ira: 0.97,
    difficulty: 0.12,
  },
];

const MEL_SITES: [string, string][] = [
  ['bovenrug links', 'Trunk'],
  ['borst rechts', 'Trunk'],
  ['flank links', 'Trunk'],
  ['onderbeen rechts', 'Lower extremity'],
  ['bovenbeen links', 'Lower extremity'],
  ['voetzool rechts', 'Lower extremity'],
  ['bovenarm links', 'Upper extremity'],
  ['onderarm rechts', 'Upper extremity'],
  ['wang links', 'Head and Neck'],
  ['hoofdhuid', 'Head and Neck'],
];

function melanoma(rng: Rng): MadeReport {
  const t: Record<string, Value> = {};
  for (const v of melVars) t[v.key] = NS;
  const kind = rng.weighted([
    ['primary', 5],
    ['insitu', 1.2],
    ['wle', 1.5],
    ['slnb', 1.5],
    ['both', 1.2],
  ] as const);
  const site = rng.pick(MEL_SITES);
  const revision = rng.chance(0.12);
  if (revision) t['Report a revision'] = 'Yes';
  const head = revision ? 'Revisie van het eerder uitgebrachte verslag (aanvullende coupes beoordeeld).\n\n' : '';
  let text: string;
  if (kind === 'primary' || kind === 'insitu') {
    t['Primary melanoma'] = 'Yes';
    const insitu = kind === 'insitu';
    t['In situ melanoma'] = insitu ? 'Yes' : 'No';
    t['Location of melanoma'] = site[1];
    const acral = site[0].startsWith('voetzool');
    const subtype = insitu ? rng.pick(['Superficial spreading melanoma', NS]) : acral ? 'Acral melanoma' : rng.weighted([['Superficial spreading melanoma', 5], ['Nodular melanoma', 2], ['Desmoplastic melanoma', 0.4], [NS, 1]] as const);
    t['Subtype of melanoma'] = subtype;
    const subNl = { 'Superficial spreading melanoma': 'superficieel spreidend melanoom', 'Nodular melanoma': 'nodulair melanoom', 'Acral melanoma': 'acraal lentigineus melanoom', 'Desmoplastic melanoma': 'desmoplastisch melanoom', [NS]: 'melanoom' }[subtype]!;
    const breslow = insitu ? null : rng.pick([0.4, 0.6, 0.8, 1.1, 1.4, 2.1, 3.0, 4.6, 6.2]);
    if (breslow !== null) t['Breslow thickness'] = breslow;
    const ulc = insitu ? null : breslow! > 2 ? rng.chance(0.6) : rng.chance(0.1);
    if (ulc !== null) t['Ulceration'] = ulc ? 'Yes' : 'No';
    const mitoses = insitu ? null : rng.chance(0.8) ? rng.pick([0, 1, 2, 3, 5, 8]) : null;
    if (mitoses !== null) {
      t['Mitosis described'] = 'Yes';
      t['Mitosis count'] = mitoses;
    } else if (!insitu && rng.chance(0.3)) t['Mitosis described'] = 'No';
    const sat = insitu ? null : rng.chance(0.85) ? rng.chance(0.08) : null;
    if (sat !== null) t['Microsatellites present'] = sat ? 'Yes' : 'No';
    const lymph = insitu ? null : rng.chance(0.7) ? rng.chance(0.06) : null;
    if (lymph !== null) t['Lymphatic invasion'] = lymph ? 'Yes' : 'No';
    const multiple = rng.chance(0.06);
    if (multiple) t['Multiple primary melanoma'] = 'Yes';
    else if (rng.chance(0.2)) t['Multiple primary melanoma'] = 'No';
    const micro = [
      insitu
        ? 'Melanocytaire proliferatie beperkt tot de epidermis met pagetoïde opstijging, zonder dermale invasie.'
        : `Asymmetrische melanocytaire proliferatie met invasie in de ${breslow! > 1 ? 'reticulaire' : 'papillaire'} dermis.`,
      ulc === null ? '' : ulc ? 'Ulceratie aanwezig.' : 'Geen ulceratie.',
      mitoses === null ? (t['Mitosis described'] === 'No' ? 'Mitosen niet beoordeelbaar.' : '') : mitoses === 0 ? 'Geen dermale mitosen (0/mm²).' : `${mitoses} mitose${mitoses > 1 ? 'n' : ''} per mm².`,
      sat === null ? '' : sat ? 'Microsatellieten aanwezig.' : 'Geen microsatellieten.',
      lymph === null ? '' : lymph ? 'Lymfangio-invasie aanwezig.' : 'Geen lymfangio-invasie.',
      multiple ? 'Daarnaast in een tweede excisie (punt 2) een separaat tweede primair melanoom in situ.' : '',
    ]
      .filter(Boolean)
      .join(' ');
    text = `${head}Klinische gegevens: Pigmentlaesie ${site[0]}, ${rng.pick(['groeiend', 'onregelmatig van kleur', 'bloedend', 'klinisch verdacht voor melanoom'])}. Excisie met ${rng.pick(['2 mm', '3 mm', '1 cm'])} marge.\n\nMacroscopie: Huidexcidaat van ${dec(rng.int(12, 40) / 10)} x ${dec(rng.int(6, 18) / 10)} cm met een ${rng.pick(['bruin-zwarte', 'onregelmatig gepigmenteerde', 'roze-bruine'])} laesie van ${dec(rng.int(4, 18) / 10)} cm.\n\nMicroscopie: ${micro}\n\nConclusie: Huid ${site[0]}, excisie: ${insitu ? `${subNl === 'melanoom' ? 'melanoom' : subNl} in situ` : subNl}${breslow !== null ? `, Breslow-dikte ${dec(breslow)} mm` : ''}${ulc !== null ? `, ${ulc ? 'met' : 'zonder'} ulceratie` : ''}. ${rng.pick(['Radicaal verwijderd.', 'Lateraal niet radicaal.', ''])}`.trim();
  } else {
    t['Primary melanoma'] = 'No';
    t['In situ melanoma'] = rng.chance(0.5) ? 'No' : NS;
    t['Specimen type'] = kind === 'wle' ? 'WLE' : kind === 'slnb' ? 'SLNB' : 'Both';
    const parts: string[] = [];
    if (kind !== 'slnb') parts.push(`Huid ${site[0]}, re-excisie: litteken zonder restmelanoom, radicaal.`);
    if (kind !== 'wle') {
      const positive = rng.chance(0.35);
      t['SLNB metastases present'] = positive ? 'Yes' : 'No';
      const node = rng.pick(['oksel links', 'oksel rechts', 'lies rechts', 'lies links', 'hals links']);
      if (positive) {
        const burden = rng.pick([0.1, 0.3, 0.6, 1.2, 2.4, 4.0]);
        t['SLNB tumour burden'] = burden;
        parts.push(`Schildwachtklier ${node} (${rng.int(1, 3)} klieren): metastase van melanoom, grootste diameter ${dec(burden)} mm, ${rng.pick(['subcapsulair gelegen', 'parenchymateus', 'zonder kapseldoorbraak'])}.`);
      } else parts.push(`Schildwachtklier ${node} (${rng.int(1, 3)} klieren): geen metastasen (HE en immunohistochemie SOX10/Melan-A).`);
    }
    const breslowBefore = dec(rng.pick([1.2, 1.8, 2.4, 3.1]));
    text = `${head}Klinische gegevens: Status na excisie melanoom ${site[0]} (Breslow ${breslowBefore} mm). ${kind === 'wle' ? 'Re-excisie.' : kind === 'slnb' ? 'Schildwachtklierprocedure.' : 'Re-excisie en schildwachtklierprocedure.'}\n\nMacroscopie: ${kind !== 'slnb' ? `Huidspoel van ${rng.int(4, 9)} x ${rng.int(2, 4)} cm met centraal litteken. ` : ''}${kind !== 'wle' ? `Vetweefsel met ${rng.int(1, 3)} lymfklier(en), geheel ingesloten.` : ''}\n\nConclusie:\n${parts.join('\n')}`;
  }
  return { text, meta: { specimen: kind, year: year(rng), revision }, truth: t };
}

// ---------------------------------------------------------------------------------------------
// A.6 Sarcomas (Czech), Tables A13 / A14

const sarVars: VarDef[] = [
  { key: 'cytologic atypia', type: 'CATEGORICAL', description: 'Highest degree of cytologic atypia detected. "missing" if not specified.', options: ['Mild', 'Moderate', 'Severe', M], aliases: { mírná: 'Mild', střední: 'Moderate', těžká: 'Severe' }, default: M, graphStep: 1, ira: 0.57, difficulty: -0.3 },
  { key: 'invasion into fascia', type: 'BINARY', description: 'Was invasion into fascia detected? "missing" if not specified.', options: ['Yes', 'No', M], aliases: { ano: 'Yes', ne: 'No' }, default: M, graphStep: 2, ira: 0.64, difficulty: -0.35 },
  { key: 'vascular invasion', type: 'BINARY', description: 'Was vascular invasion detected? "missing" if not specified.', options: ['Yes', 'No', M], aliases: { ano: 'Yes', ne: 'No' }, default: M, graphStep: 3, ira: 0.87, difficulty: 0.1 },
  { key: 'necrosis', type: 'BINARY', description: 'Was necrosis detected? "missing" if not specified.', options: ['Yes', 'No', M], aliases: { ano: 'Yes', ne: 'No' }, default: M, graphStep: 4, ira: 0.88, difficulty: -0.2 },
  { key: 'tumour size', type: 'NUMERIC', description: 'Largest dimension in mm. "missing" if not specified.', default: M, graphStep: 5, ira: 0.84, difficulty: 0.02 },
  { key: 'mitotic hpf', type: 'EXACT_STRING', description: 'Highest mitotic activity in _/HPF. Use exact string. "missing" if not specified.', default: M, graphStep: 6, ira: 0.76, difficulty: 0.1 },
  { key: 'mitotic mm', type: 'EXACT_STRING', description: 'Highest mitotic activity in _/mm2. Use exact string. "missing" if not specified.', default: M, graphStep: 7, ira: 0.93, difficulty: 0.1 },
];

const SARCOMA_TYPES = ['liposarkom dediferencovaný', 'leiomyosarkom', 'myxofibrosarkom', 'synoviální sarkom', 'nediferencovaný pleomorfní sarkom', 'gastrointestinální stromální tumor (GIST)', 'myxoidní liposarkom'];
const SARCOMA_SITES = ['stehna vpravo', 'stehna vlevo', 'retroperitonea', 'paže vlevo', 'hýždě vpravo', 'lýtka vlevo', 'břišní stěny'];

function sarcoma(rng: Rng): MadeReport {
  const t: Record<string, Value> = {};
  const type = rng.pick(SARCOMA_TYPES);
  const site = rng.pick(SARCOMA_SITES);
  const atypia = rng.weighted([['Mild', 2], ['Moderate', 3], ['Severe', 3], [M, 1.5]] as const);
  t['cytologic atypia'] = atypia;
  const atypiaText = { Mild: rng.pick(['Jádra jsou uniformní, s mírnou atypií.', 'Monomorfní neoplazie s mírnou jadernou atypií.']), Moderate: 'Nádorové buňky vykazují středně těžkou jadernou atypii.', Severe: rng.pick(['Přítomna výrazná (těžká) jaderná atypie a pleomorfie.', 'Nádorové buňky s těžkou atypií, místy bizarní jádra.']), [M]: '' }[atypia];
  const fascia = rng.weighted([['Yes', 2], ['No', 2], [M, 2]] as const);
  t['invasion into fascia'] = fascia;
  const fasciaText = { Yes: rng.pick(['Tumor infiltruje fascii.', 'Nádor prorůstá přes povrchovou fascii do podkoží.']), No: 'Fascie je bez nádorové infiltrace.', [M]: '' }[fascia];
  const vasc = rng.weighted([['Yes', 1], ['No', 3], [M, 2]] as const);
  t['vascular invasion'] = vasc;
  const vascText = { Yes: 'Zastižena angioinvaze.', No: rng.pick(['Angioinvaze nezastižena.', 'Bez průkazu cévní invaze.']), [M]: '' }[vasc];
  const nec = rng.weighted([['Yes', 3], ['No', 2], [M, 1]] as const);
  t['necrosis'] = nec;
  const necText = { Yes: `Nekrózy přítomny (cca ${rng.pick([5, 10, 20, 40])} % objemu nádoru).`, No: 'Nekrózy nejsou přítomny.', [M]: '' }[nec];
  const dims = [rng.int(20, 180), rng.int(15, 120), rng.int(10, 90)].sort((a, b) => b - a);
  const sizeKnown = rng.chance(0.85);
  t['tumour size'] = sizeKnown ? dims[0]! : M;
  const sizeText = sizeKnown
    ? rng.chance(0.5)
      ? `Nádor velikosti ${dims.join('x')} mm.`
      : `Ložisko o rozměrech ${dims.map((d) => dec(d / 10)).join(' x ')} cm.`
    : 'Nádor fragmentovaný, velikost nelze určit.';
  const hpfCount = rng.int(1, 30);
  const hpfForm = rng.pick([`${hpfCount}/10HPF`, `${hpfCount}mit/10HPF`, `${Math.max(1, Math.round(hpfCount / 3))}mit/50HPF`]);
  const hpfKnown = rng.chance(0.6);
  t['mitotic hpf'] = hpfKnown ? hpfForm : M;
  const mmKnown = rng.chance(0.45);
  const mmForm = rng.pick([`${rng.int(1, 20)}/mm2`, `${rng.int(0, 1)}-${rng.int(2, 3)}mitosa/5mm2`, `${rng.int(2, 15)}mitos/mm2`]);
  t['mitotic mm'] = mmKnown ? mmForm : M;
  const mitText = [hpfKnown ? `Mitotická aktivita ${hpfForm}.` : '', mmKnown ? `Mitózy ${mmForm}.` : ''].filter(Boolean).join(' ');
  const grade = rng.pick(['G1', 'G2', 'G3']);
  const text = [
    `Materiál: ${rng.pick(['resekát nádoru', 'exstirpace tumoru', 'resekát měkkých tkání'])} ${site}.`,
    `Makroskopicky: ${sizeText} Na řezu ${rng.pick(['bělavá', 'šedorůžová', 'žlutavá'])} tkáň${nec === 'Yes' ? ' s ložisky nekróz' : ''}.`,
    `Mikroskopicky: ${cap(type)} tvořený ${rng.pick(['vřetenitými', 'pleomorfními', 'epiteloidními'])} buňkami. ${[atypiaText, mitText, necText, vascText, fasciaText].filter(Boolean).join(' ')}`,
    `Závěr: ${cap(type)} ${site}, ${grade} dle FNCLCC.${rng.chance(0.4) ? ' Resekční okraje bez nádoru.' : ''}`,
  ].join('\n');
  return { text, meta: { year: year(rng), grade, site }, truth: t };
}

// ---------------------------------------------------------------------------------------------

export const EXTRACTION_CASES: UseCaseGen[] = [
  {
    slug: 'paper-crlm-nl',
    idPrefix: 'CRLM',
    name: 'Colorectal liver metastases (Dutch)',
    description:
      'Liver resection characteristics from Dutch pathology reports of resected colorectal liver metastases: resected segments, hemihepatectomy, resection margin and R classification (extraction paper, Supplementary A.1, Table A2). All reports are synthetic.',
    language: 'nl',
    reportType: 'pathology',
    tags: ['pathology', 'liver', 'Dutch', 'extraction-paper', 'synthetic'],
    count: 32,
    variables: crlmVars,
    task: taskFor('Extract information into this exact JSON structure:', crlmVars),
    strategies: ['ZERO_SHOT', 'FEW_SHOT', 'CHAIN_OF_THOUGHT'],
    strategyScale: 0.3,
    annotators: 2,
    distractors: { 'List of liver segments resected during first surgery': ['1', '4a', '6'] },
    make: crlm,
  },
  {
    slug: 'paper-liver-nl',
    idPrefix: 'LIVER',
    name: 'Liver tumours (Dutch)',
    description:
      'Disease phenotypes from the conclusion sections of Dutch liver tumour pathology reports: samples, organs, retrieval method, explant, frozen section, lesion types, locations and phenotypes, metastasis and its primary site, steatosis, fibrosis, inflammation (extraction paper, Supplementary A.2, Table A4). All reports are synthetic.',
    language: 'nl',
    reportType: 'pathology',
    tags: ['pathology', 'liver', 'Dutch', 'extraction-paper', 'synthetic'],
    count: 32,
    variables: liverVars,
    task: taskFor('Extract information into this exact JSON structure:', liverVars),
    strategies: ['ZERO_SHOT', 'FEW_SHOT', 'ONE_SHOT'],
    strategyScale: 1.6,
    annotators: 2,
    distractors: {
      'Primary site of metastasis': ['colorectal', 'pancreas', 'unknown primary'],
      Steatosis: ['steatosis mild (10%)', 'steatosis'],
      Inflammation: ['inflammation chronic portal mild', 'inflammation'],
      'Lesion phenotype': ['hepatocellular adenoma', 'focal nodular hyperplasia'],
      Organs: ['gallbladder'],
      'Locations of tissue samples extracted from liver': ['segment 4b', 'right lobe'],
    },
    make: liver,
  },
  {
    slug: 'paper-neuro-nl',
    idPrefix: 'NEURO',
    name: 'Neurodegenerative diseases, brain MRI (Dutch)',
    description:
      'Imaging markers from Dutch brain MRI reports of a memory clinic: Fazekas, MTA and GCA scores, infarcts by type with counts, DWI and SWI abnormalities, microbleeds and siderosis (extraction paper, Supplementary A.3, Table A6). All reports are synthetic.',
    language: 'nl',
    reportType: 'radiology',
    tags: ['radiology', 'neuro', 'MRI', 'Dutch', 'extraction-paper', 'synthetic'],
    count: 32,
    variables: neuroVars,
    task: taskFor('Extract the neuroimaging findings into this exact JSON structure:', neuroVars),
    strategies: ['ZERO_SHOT', 'FEW_SHOT', 'PROMPT_GRAPH'],
    strategyScale: 1.8,
    annotators: 2,
    make: neuro,
  },
  {
    slug: 'paper-stt-en',
    idPrefix: 'STTEN',
    name: 'Soft-tissue tumours (English)',
    description:
      'Phenotype, location and grade from English soft-tissue tumour pathology reports (extraction paper, Supplementary A.4, Table A8). Same prompt as the Dutch sub-use case; examples in English. All reports are synthetic.',
    language: 'en',
    reportType: 'pathology',
    tags: ['pathology', 'soft-tissue tumour', 'English', 'extraction-paper', 'synthetic'],
    count: 32,
    variables: sttVars({ specimen: 0.66, reason: 0.38, disease: 0.89, ddx: 0.69, stt: 0.71, certainty: 0.72, behaviour: 0.85, grade: 0.73, location: 0.92 }),
    task: '',
    strategies: ['ZERO_SHOT', 'FEW_SHOT', 'SELF_CONSISTENCY'],
    strategyScale: 0.4,
    annotators: 2,
    distractors: { 'Disease Type': ['Sarcoma', 'Spindle cell neoplasm'], 'Disease Type differential diagnosis': ['Sarcoma', 'Fibroma'], 'Tumour Location': ['Leg', 'Soft tissue'] },
    make: stt('en'),
  },
  {
    slug: 'paper-stt-nl',
    idPrefix: 'STTNL',
    name: 'Soft-tissue tumours (Dutch)',
    description:
      'Phenotype, location and grade from Dutch soft-tissue tumour pathology reports (extraction paper, Supplementary A.4, Table A9). Same prompt as the English sub-use case; examples in Dutch. All reports are synthetic.',
    language: 'nl',
    reportType: 'pathology',
    tags: ['pathology', 'soft-tissue tumour', 'Dutch', 'extraction-paper', 'synthetic'],
    count: 32,
    variables: sttVars({ specimen: 0.41, reason: 0.47, disease: 0.91, ddx: 0.86, stt: 0.52, certainty: 0.69, behaviour: 0.61, grade: 0.72, location: 0.89 }),
    task: '',
    strategies: ['ZERO_SHOT', 'FEW_SHOT', 'PROMPT_GRAPH'],
    strategyScale: 0.5,
    annotators: 2,
    distractors: { 'Disease Type': ['Sarcoma', 'Spindle cell neoplasm'], 'Disease Type differential diagnosis': ['Sarcoma', 'Fibroma'], 'Tumour Location': ['Leg', 'Soft tissue'] },
    make: stt('nl'),
  },
  {
    slug: 'paper-melanoma-nl',
    idPrefix: 'MELAN',
    name: 'Melanomas (Dutch)',
    description:
      'Primary tumour characteristics, recurrence and sentinel lymph node status from Dutch melanoma pathology reports (extraction paper, Supplementary A.5, Table A11), with the prompt graph\'s conditions (SLNB fields only for SLNB specimens, mitosis count only when mitoses are described). All reports are synthetic.',
    language: 'nl',
    reportType: 'pathology',
    tags: ['pathology', 'melanoma', 'Dutch', 'extraction-paper', 'synthetic'],
    count: 34,
    variables: melVars,
    task: DIRECT_TASK(
      'Extract information into JSON with these fields. The output must look like:',
      melVars.map((v) => [v.key, '""']),
    ),
    strategies: ['ZERO_SHOT', 'FEW_SHOT', 'ONE_SHOT'],
    strategyScale: 0.4,
    annotators: 2,
    make: melanoma,
  },
  {
    slug: 'paper-sarcoma-cs',
    idPrefix: 'SARC',
    name: 'Sarcomas (Czech)',
    description:
      'Histopathological markers from Czech sarcoma pathology reports: cytologic atypia, invasion into fascia, vascular invasion, necrosis, tumour size and mitotic activity per HPF and per mm² (extraction paper, Supplementary A.6, Table A13). Three annotators and a consensus. All reports are synthetic.',
    language: 'cs',
    reportType: 'pathology',
    tags: ['pathology', 'sarcoma', 'Czech', 'extraction-paper', 'synthetic'],
    count: 30,
    variables: sarVars,
    task: DIRECT_TASK(
      'Extract information from the following Czech clinical note into JSON with these fields. The output must look like:',
      sarVars.map((v) => [v.key, v.type === 'NUMERIC' ? '0' : '""']),
    ),
    strategies: ['ZERO_SHOT', 'FEW_SHOT', 'PROMPT_GRAPH'],
    strategyScale: 0.3,
    annotators: 3,
    distractors: { 'mitotic hpf': ['5/10HPF', '2mit/50HPF'], 'mitotic mm': ['3/mm2', '0-1mitosa/5mm2'] },
    make: sarcoma,
  },
];

for (const c of EXTRACTION_CASES) if (c.task === '') c.task = taskFor('Extract information into this exact JSON structure:', c.variables);
