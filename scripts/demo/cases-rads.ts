/**
 * The RADS paper's schemes (RXL-RADSet, Table 2.1 and Supplementary Table 3): one use case per
 * scheme with one categorical variable (its label set and the collapse map of the paper's
 * collapsed scoring), tagged with the scheme's complexity (CB + AWD + IAI = TCS and its bin), and
 * synthetic English reports written here in the paper's section layout (indication, technique,
 * findings, impression) by five simulated radiologist profiles.
 */
import type { MadeReport, UseCaseGen } from './cases-types';
import type { Rng, VarDef } from './lib';

interface Scenario {
  label: string;
  weight: number;
  findings: string[];
  impression: string[];
}

interface Scheme {
  slug: string;
  scheme: string;
  title: string;
  modalities: string[];
  labels: string[];
  collapse?: Record<string, string>;
  /** Supplementary Table 3 (principal modality) */
  cb: number;
  awd: number;
  iai: number;
  indication: string[];
  technique: Record<string, string>;
  scenarios: Scenario[];
  guide: string;
}

const bin = (tcs: number) => (tcs < 5 ? 'minimal' : tcs <= 8 ? 'moderate' : 'high');

const SCHEMES: Scheme[] = [
  {
    slug: 'rads-bi-rads',
    scheme: 'BI-RADS',
    title: 'Breast imaging (BI-RADS)',
    modalities: ['Mammography', 'US', 'MRI'],
    labels: ['0', '1', '2', '3', '4', '4A', '4B', '4C', '5', '6'],
    collapse: { '4A': '4', '4B': '4', '4C': '4' },
    cb: 2,
    awd: 2,
    iai: 3,
    indication: ['Screening, no complaints.', 'Palpable lump in the left breast.', 'Follow-up of a probably benign finding.', 'Known carcinoma of the right breast, staging.', 'High-risk screening (BRCA1 carrier).'],
    technique: { Mammography: 'Bilateral CC and MLO views, tomosynthesis.', US: 'Targeted high-frequency ultrasound.', MRI: 'Dynamic contrast-enhanced breast MRI at 3T with DWI.' },
    scenarios: [
      { label: '0', weight: 0.5, findings: ['A possible asymmetry in the upper outer quadrant of the left breast on the CC view only.'], impression: ['Incomplete: additional imaging evaluation needed.'] },
      { label: '1', weight: 1.5, findings: ['Scattered fibroglandular density. No mass, suspicious calcification or architectural distortion.'], impression: ['Negative.'] },
      { label: '2', weight: 2, findings: ['A 9 mm oval circumscribed anechoic lesion with posterior enhancement at 2 o\'clock, a simple cyst.', 'Coarse popcorn calcifications in the right breast, an involuting fibroadenoma.'], impression: ['Benign findings.'] },
      { label: '3', weight: 1.5, findings: ['An 8 mm oval, circumscribed, parallel hypoechoic mass at 10 o\'clock, 4 cm from the nipple.', 'A group of round punctate calcifications, stable in appearance, first seen on this study.'], impression: ['Probably benign; short-interval follow-up in 6 months suggested.'] },
      { label: '4A', weight: 0.8, findings: ['A 7 mm oval mass with mostly circumscribed but partly indistinct margin.'], impression: ['Low suspicion for malignancy; tissue sampling recommended.'] },
      { label: '4B', weight: 0.8, findings: ['Grouped fine pleomorphic calcifications over 11 mm in the upper inner quadrant.'], impression: ['Moderate suspicion; stereotactic biopsy recommended.'] },
      { label: '4C', weight: 0.6, findings: ['A 12 mm irregular hypoechoic mass with angular margins and no posterior features.'], impression: ['High suspicion for malignancy; ultrasound-guided core biopsy.'] },
      { label: '5', weight: 1, findings: ['A 19 mm irregular spiculated mass with associated fine linear branching calcifications and skin retraction.', 'An irregular mass with non-circumscribed margins and washout kinetics, 23 mm.'], impression: ['Highly suggestive of malignancy.'] },
      { label: '6', weight: 0.8, findings: ['The biopsy-proven carcinoma at 12 o\'clock measures 21 mm; clip in place. No additional lesion.'], impression: ['Known biopsy-proven malignancy.'] },
    ],
    guide: 'BI-RADS (5th edition): 0 incomplete; 1 negative; 2 benign; 3 probably benign (≤2% malignancy); 4A low, 4B moderate, 4C high suspicion; 5 highly suggestive (≥95%); 6 known biopsy-proven malignancy. Use the most suspicious finding. Answer with the category only, e.g. "4B".',
  },
  {
    slug: 'rads-cad-rads',
    scheme: 'CAD-RADS',
    title: 'Coronary artery disease (CAD-RADS)',
    modalities: ['CT'],
    labels: ['0', '1', '2', '3', '4A', '4B', '5', 'N'],
    collapse: { '4A': '4', '4B': '4' },
    cb: 1,
    awd: 2,
    iai: 2,
    indication: ['Atypical chest pain, intermediate pre-test probability.', 'Stable angina.', 'Pre-operative assessment before valve surgery.'],
    technique: { CT: 'Prospectively ECG-gated coronary CT angiography, 100 kV, heart rate 58/min after metoprolol.' },
    scenarios: [
      { label: '0', weight: 1.5, findings: ['Calcium score 0. No plaque or stenosis in any coronary segment.'], impression: ['No coronary artery disease.'] },
      { label: '1', weight: 1, findings: ['Minimal calcified plaque in the proximal LAD with less than 25% stenosis.'], impression: ['Minimal non-obstructive CAD.'] },
      { label: '2', weight: 1.2, findings: ['Mixed plaque in the mid RCA causing 30-49% stenosis.'], impression: ['Mild non-obstructive CAD.'] },
      { label: '3', weight: 1, findings: ['Non-calcified plaque of the proximal circumflex with 50-69% stenosis.'], impression: ['Moderate stenosis; consider functional assessment.'] },
      { label: '4A', weight: 0.6, findings: ['Severe 70-99% stenosis of the mid LAD due to a partially calcified plaque.'], impression: ['Severe single-vessel stenosis.'] },
      { label: '4B', weight: 0.4, findings: ['Left main stenosis above 50% and three-vessel obstructive disease.'], impression: ['Left main or three-vessel obstructive disease.'] },
      { label: '5', weight: 0.3, findings: ['Total occlusion of the proximal RCA with distal reconstitution via collaterals.'], impression: ['Total coronary occlusion.'] },
      { label: 'N', weight: 0.3, findings: ['Severe motion artefact and dense calcification preclude assessment of the mid LAD and RCA.'], impression: ['Non-diagnostic study.'] },
    ],
    guide: 'CAD-RADS 2.0: 0 (0%), 1 (1-24%), 2 (25-49%), 3 (50-69%), 4A (70-99%), 4B (left main >50% or three-vessel ≥70%), 5 (total occlusion), N (non-diagnostic). Grade the most severe stenosis. Answer with the category only, e.g. "3".',
  },
  {
    slug: 'rads-gb-rads',
    scheme: 'GB-RADS',
    title: 'Gallbladder wall thickening (GB-RADS)',
    modalities: ['US'],
    labels: ['0', '1', '2', '3', '4', '5'],
    cb: 2,
    awd: 2,
    iai: 2,
    indication: ['Incidental gallbladder wall thickening on CT.', 'Right upper quadrant discomfort.', 'Follow-up of known gallstones.'],
    technique: { US: 'Fasting abdominal ultrasound with high-frequency linear probe evaluation of the gallbladder wall.' },
    scenarios: [
      { label: '0', weight: 0.5, findings: ['Gallbladder contracted, non-fasting state; wall not assessable.'], impression: ['Inadequate evaluation.'] },
      { label: '1', weight: 1.5, findings: ['Normal gallbladder, wall 2 mm, no stones.'], impression: ['Normal gallbladder.'] },
      { label: '2', weight: 1.5, findings: ['Symmetric layered wall thickening of 5 mm with intramural cysts and comet-tail artefacts, typical of adenomyomatosis.'], impression: ['Benign wall thickening.'] },
      { label: '3', weight: 1, findings: ['Diffuse symmetric wall thickening of 6 mm with preserved layering but without intramural cysts.'], impression: ['Probably benign.'] },
      { label: '4', weight: 0.8, findings: ['Focal asymmetric wall thickening of 9 mm at the fundus with loss of layering.'], impression: ['Intermediate risk of malignancy.'] },
      { label: '5', weight: 0.7, findings: ['Focal mass-forming wall thickening with infiltration of the adjacent liver parenchyma.'], impression: ['High risk of malignancy.'] },
    ],
    guide: 'GB-RADS (ultrasound): 0 inadequate; 1 normal; 2 benign; 3 probably benign; 4 intermediate risk; 5 high risk of malignancy. Answer with the category only, e.g. "2".',
  },
  {
    slug: 'rads-li-rads',
    scheme: 'LI-RADS',
    title: 'Liver observations in patients at risk (LI-RADS CT/MRI, LR-TR)',
    modalities: ['CT', 'MRI'],
    labels: ['LR-1', 'LR-2', 'LR-3', 'LR-4', 'LR-5', 'LR-M', 'LR-TIV', 'LR-NC', 'LR-TR Nonviable', 'LR-TR Equivocal', 'LR-TR Viable'],
    collapse: { 'LR-TR Nonviable': 'LR-TR', 'LR-TR Equivocal': 'LR-TR', 'LR-TR Viable': 'LR-TR' },
    cb: 3,
    awd: 3,
    iai: 4,
    indication: ['Cirrhosis (hepatitis B), surveillance.', 'New observation on surveillance ultrasound, cirrhosis due to alcohol.', 'Follow-up after microwave ablation of HCC in segment 8.'],
    technique: { CT: 'Multiphase CT: late arterial, portal venous and 3-minute delayed phases.', MRI: 'Gadoxetic acid-enhanced MRI with DWI and hepatobiliary phase.' },
    scenarios: [
      { label: 'LR-1', weight: 0.6, findings: ['A 9 mm observation in segment 6 with peripheral nodular enhancement and progressive fill-in, a haemangioma.'], impression: ['Definitely benign.'] },
      { label: 'LR-2', weight: 0.5, findings: ['A 12 mm distinctive nodule without malignant imaging features, unchanged for two years.'], impression: ['Probably benign.'] },
      { label: 'LR-3', weight: 1.5, findings: ['A 14 mm observation in segment 7 with non-rim arterial phase hyperenhancement and no washout or capsule.'], impression: ['Intermediate probability of malignancy.'] },
      { label: 'LR-4', weight: 0.8, findings: ['A 16 mm observation with non-rim APHE and non-peripheral washout, no capsule.'], impression: ['Probably HCC.'] },
      { label: 'LR-5', weight: 1.5, findings: ['A 24 mm observation in segment 8 with non-rim APHE, non-peripheral washout and an enhancing capsule.'], impression: ['Definitely HCC.'] },
      { label: 'LR-M', weight: 0.4, findings: ['A 31 mm observation with rim arterial hyperenhancement, peripheral washout and targetoid restricted diffusion.'], impression: ['Probably or definitely malignant, not HCC specific.'] },
      { label: 'LR-TIV', weight: 0.3, findings: ['Enhancing soft tissue expands the right portal vein, contiguous with an infiltrative mass.'], impression: ['Tumour in vein.'] },
      { label: 'LR-NC', weight: 0.2, findings: ['The arterial phase is degraded by respiratory motion; the observation cannot be categorised.'], impression: ['Not categorisable due to image degradation.'] },
      { label: 'LR-TR Nonviable', weight: 0.6, findings: ['The ablation zone in segment 8 shows no enhancement in any phase.'], impression: ['Treated observation, nonviable.'] },
      { label: 'LR-TR Equivocal', weight: 0.4, findings: ['Thin smooth rim enhancement around the ablation cavity, atypical for residual tumour.'], impression: ['Treated observation, equivocal.'] },
      { label: 'LR-TR Viable', weight: 0.5, findings: ['Nodular arterial hyperenhancement with washout at the margin of the treatment zone.'], impression: ['Treated observation, viable tumour.'] },
    ],
    guide: 'LI-RADS v2018 CT/MRI with the v2024 treatment response algorithm: LR-1 to LR-5 by major features (APHE, washout, capsule, threshold growth, size), LR-M, LR-TIV, LR-NC; treated observations LR-TR Nonviable, Equivocal or Viable. Answer with the category only, e.g. "LR-4".',
  },
  {
    slug: 'rads-lung-rads',
    scheme: 'Lung-RADS',
    title: 'Lung cancer screening (Lung-RADS)',
    modalities: ['CT'],
    labels: ['0', '1', '2', '3', '4A', '4B', '4X'],
    collapse: { '4A': '4', '4B': '4', '4X': '4' },
    cb: 1,
    awd: 2,
    iai: 1,
    indication: ['Annual low-dose CT screening, 35 pack-years.', 'Baseline lung cancer screening, former smoker.'],
    technique: { CT: 'Low-dose non-contrast chest CT, 1 mm reconstructions.' },
    scenarios: [
      { label: '0', weight: 0.4, findings: ['Part of the lungs not imaged due to an incomplete acquisition.'], impression: ['Incomplete.'] },
      { label: '1', weight: 2, findings: ['No lung nodules. Mild centrilobular emphysema.'], impression: ['Negative.'] },
      { label: '2', weight: 1.6, findings: ['A 4 mm solid nodule in the right upper lobe.', 'A perifissural 8 mm solid nodule with benign morphology.'], impression: ['Benign appearance or behaviour.'] },
      { label: '3', weight: 0.6, findings: ['A new 7 mm solid nodule in the left lower lobe.'], impression: ['Probably benign; 6-month low-dose CT.'] },
      { label: '4A', weight: 0.6, findings: ['A 10 mm solid nodule in the right middle lobe, new since the previous screen.'], impression: ['Suspicious; 3-month low-dose CT or PET/CT.'] },
      { label: '4B', weight: 0.6, findings: ['A 17 mm solid nodule in the left upper lobe.'], impression: ['Very suspicious; chest CT with contrast, PET/CT or tissue sampling.'] },
      { label: '4X', weight: 0.3, findings: ['A 12 mm part-solid nodule with spiculation and a growing solid component.'], impression: ['Category 3 or 4 nodule with additional features increasing suspicion.'] },
    ],
    guide: 'Lung-RADS v2022: 0 incomplete; 1 negative; 2 benign; 3 probably benign; 4A suspicious; 4B very suspicious; 4X category 3 or 4 with additional suspicious features. Use mean diameter thresholds. Answer with the category only, e.g. "4A".',
  },
  {
    slug: 'rads-ni-rads',
    scheme: 'NI-RADS',
    title: 'Post-treatment head and neck (NI-RADS)',
    modalities: ['CT'],
    labels: ['1', '2A', '2B', '3', '4'],
    collapse: { '2A': '2', '2B': '2' },
    cb: 2,
    awd: 2,
    iai: 3,
    indication: ['Surveillance 6 months after chemoradiation for oropharyngeal carcinoma.', 'Follow-up after laryngectomy.'],
    technique: { CT: 'Contrast-enhanced neck CT with 1 mm axial and multiplanar reconstructions.' },
    scenarios: [
      { label: '1', weight: 2, findings: ['Expected post-radiation mucosal enhancement and oedema at the primary site; no discrete mass.'], impression: ['No evidence of recurrence.'] },
      { label: '2A', weight: 0.6, findings: ['Focal superficial mucosal enhancement at the left tongue base without a mass.'], impression: ['Low suspicion, mucosal; direct inspection recommended.'] },
      { label: '2B', weight: 0.5, findings: ['Deep ill-defined soft tissue at the resection bed with mild enhancement, not mass-like.'], impression: ['Low suspicion, deep; short-interval follow-up.'] },
      { label: '3', weight: 1.3, findings: ['A new discrete enhancing 14 mm nodule at the primary site.'], impression: ['High suspicion; biopsy recommended.'] },
      { label: '4', weight: 0.5, findings: ['Biopsy-proven recurrence now with a 25 mm enhancing mass invading the pre-epiglottic fat.'], impression: ['Definite recurrence.'] },
    ],
    guide: 'NI-RADS (post-treatment neck, primary site): 1 no evidence of recurrence; 2A low suspicion, mucosal; 2B low suspicion, deep; 3 high suspicion; 4 definite recurrence. Answer with the category only, e.g. "2B".',
  },
  {
    slug: 'rads-o-rads',
    scheme: 'O-RADS',
    title: 'Adnexal lesions (O-RADS US and MRI)',
    modalities: ['US', 'MRI'],
    labels: ['0', '1', '2', '3', '4', '5'],
    cb: 3,
    awd: 3,
    iai: 2,
    indication: ['Pelvic pain, adnexal lesion on ultrasound.', 'Postmenopausal woman with an incidental adnexal cyst.', 'Indeterminate adnexal mass on ultrasound, problem-solving MRI.'],
    technique: { US: 'Transvaginal ultrasound with colour Doppler.', MRI: 'Pelvic MRI with T2, DWI and dynamic contrast-enhanced imaging.' },
    scenarios: [
      { label: '0', weight: 0.3, findings: ['The left ovary is obscured by bowel gas and not visualised.'], impression: ['Incomplete evaluation.'] },
      { label: '1', weight: 0.5, findings: ['Normal ovaries with a 17 mm dominant follicle in a premenopausal patient.'], impression: ['Normal ovary.'] },
      { label: '2', weight: 2, findings: ['A 42 mm unilocular smooth-walled anechoic cyst.', 'A typical haemorrhagic cyst with reticular internal pattern, 35 mm.'], impression: ['Almost certainly benign.'] },
      { label: '3', weight: 1.3, findings: ['A 65 mm unilocular cyst with smooth inner wall and low-level echoes.', 'A multilocular cyst with smooth septations and colour score 1.'], impression: ['Low risk of malignancy.'] },
      { label: '4', weight: 0.8, findings: ['A multilocular cyst with an irregular septation and a 9 mm solid component, colour score 2.'], impression: ['Intermediate risk of malignancy.'] },
      { label: '5', weight: 0.9, findings: ['A solid mass with irregular outer contour, colour score 4, and ascites.', 'A solid component with a high-risk time-intensity curve and peritoneal nodules.'], impression: ['High risk of malignancy.'] },
    ],
    guide: 'O-RADS US v2022 / O-RADS MRI: 0 incomplete; 1 normal ovary; 2 almost certainly benign; 3 low risk; 4 intermediate risk; 5 high risk. MRI uses the time-intensity curve of solid tissue. Answer with the category only, e.g. "3".',
  },
  {
    slug: 'rads-pi-rads',
    scheme: 'PI-RADS',
    title: 'Prostate MRI (PI-RADS)',
    modalities: ['MRI'],
    labels: ['1', '2', '3', '4', '5'],
    cb: 3,
    awd: 3,
    iai: 3,
    indication: ['Rising PSA (8.2 ng/ml), biopsy-naive.', 'Active surveillance for Gleason 3+3 cancer.', 'Prior negative biopsy, persistent PSA elevation.'],
    technique: { MRI: 'Multiparametric 3T prostate MRI (T2, DWI with b1400, DCE).' },
    scenarios: [
      { label: '1', weight: 0.8, findings: ['Peripheral zone homogeneous with normal signal on DWI and ADC.'], impression: ['Clinically significant cancer highly unlikely.'] },
      { label: '2', weight: 1.5, findings: ['Transition zone with encapsulated BPH nodules; linear peripheral zone ADC hypointensity.'], impression: ['Clinically significant cancer unlikely.'] },
      { label: '3', weight: 1.2, findings: ['An 8 mm focal mildly hypointense area on ADC in the left posterolateral peripheral zone, DCE negative.'], impression: ['Equivocal.'] },
      { label: '4', weight: 1.3, findings: ['A 12 mm focal markedly hypointense ADC lesion in the right peripheral zone with marked hyperintensity on high b-value DWI.'], impression: ['Clinically significant cancer likely.'] },
      { label: '5', weight: 1.2, findings: ['A 19 mm lesion in the left peripheral zone with marked diffusion restriction and extraprostatic extension.'], impression: ['Clinically significant cancer highly likely.'] },
    ],
    guide: 'PI-RADS v2.1: DWI is dominant in the peripheral zone (DCE upgrades 3 to 4), T2 in the transition zone (DWI upgrades). 1 very low to 5 very high likelihood of clinically significant cancer; ≥15 mm or extraprostatic extension makes 5. Answer with the score only, e.g. "4".',
  },
  {
    slug: 'rads-ti-rads',
    scheme: 'TI-RADS',
    title: 'Thyroid nodules (ACR TI-RADS)',
    modalities: ['US'],
    labels: ['TR1', 'TR2', 'TR3', 'TR4', 'TR5'],
    cb: 1,
    awd: 3,
    iai: 1,
    indication: ['Palpable thyroid nodule.', 'Incidental thyroid nodule on CT.'],
    technique: { US: 'High-frequency ultrasound of the thyroid and cervical lymph nodes.' },
    scenarios: [
      { label: 'TR1', weight: 0.7, findings: ['A 15 mm spongiform nodule in the right lobe (0 points).'], impression: ['Benign, no FNA.'] },
      { label: 'TR2', weight: 1, findings: ['A 22 mm mixed cystic and solid isoechoic nodule with smooth margins (2 points).'], impression: ['Not suspicious.'] },
      { label: 'TR3', weight: 1.3, findings: ['A 28 mm solid isoechoic nodule, wider than tall, smooth margins (3 points).'], impression: ['Mildly suspicious; FNA if ≥25 mm.'] },
      { label: 'TR4', weight: 1.3, findings: ['A 14 mm solid hypoechoic nodule with smooth margins (5 points).'], impression: ['Moderately suspicious.'] },
      { label: 'TR5', weight: 1.5, findings: ['A 12 mm solid markedly hypoechoic nodule, taller than wide, with punctate echogenic foci (10 points).'], impression: ['Highly suspicious; FNA recommended.'] },
    ],
    guide: 'ACR TI-RADS: add points for composition, echogenicity, shape, margin and echogenic foci. 0 = TR1, 2 = TR2, 3 = TR3, 4-6 = TR4, ≥7 = TR5. Answer with the level only, e.g. "TR4".',
  },
  {
    slug: 'rads-vi-rads',
    scheme: 'VI-RADS',
    title: 'Urinary bladder cancer (VI-RADS)',
    modalities: ['MRI'],
    labels: ['1', '2', '3', '4', '5'],
    cb: 2,
    awd: 2,
    iai: 2,
    indication: ['Bladder tumour on cystoscopy, staging before TURBT.', 'Haematuria with a bladder wall lesion on ultrasound.'],
    technique: { MRI: 'Multiparametric bladder MRI (T2, DWI, DCE) with adequate distension.' },
    scenarios: [
      { label: '1', weight: 1, findings: ['A 7 mm pedunculated lesion with a thickened inner layer stalk; the muscularis propria low signal line is intact.'], impression: ['Muscle invasion highly unlikely.'] },
      { label: '2', weight: 1.5, findings: ['A 16 mm broad-based lesion with intact low-signal muscle line on T2.'], impression: ['Muscle invasion unlikely.'] },
      { label: '3', weight: 1, findings: ['A sessile lesion without a stalk; the muscle line is not clearly interrupted.'], impression: ['Equivocal for muscle invasion.'] },
      { label: '4', weight: 1, findings: ['Intermediate signal extends into the muscularis propria at the left lateral wall.'], impression: ['Muscle invasion likely.'] },
      { label: '5', weight: 0.9, findings: ['The tumour extends through the bladder wall into the perivesical fat.'], impression: ['Invasion of muscle and beyond very likely.'] },
    ],
    guide: 'VI-RADS: 1 to 5 for the likelihood of muscle invasion, from the T2 category upgraded by DWI and DCE. Answer with the score only, e.g. "2".',
  },
];

/** What the examination line names after the modality. */
const EXAM: Record<string, string> = {
  'BI-RADS': 'breast',
  'CAD-RADS': 'coronary angiography',
  'GB-RADS': 'upper abdomen (gallbladder)',
  'LI-RADS': 'liver, multiphase',
  'Lung-RADS': 'chest, low-dose screening',
  'NI-RADS': 'neck with contrast',
  'O-RADS': 'pelvis (adnexa)',
  'PI-RADS': 'prostate, multiparametric',
  'TI-RADS': 'thyroid',
  'VI-RADS': 'bladder, multiparametric',
};

const PROFILES = [
  'early-career generalist',
  'mid-career generalist',
  'early-career subspecialist',
  'senior subspecialist',
  'senior resident',
];

function rads(s: Scheme) {
  return (rng: Rng, index: number): MadeReport => {
    const scenario = rng.weighted(s.scenarios.map((x) => [x, x.weight] as const));
    const modality = s.modalities[index % s.modalities.length]!;
    const profile = rng.pick(PROFILES);
    const hedge = profile.includes('resident') || profile.includes('early') ? rng.pick([' Correlation with prior imaging would be helpful.', ' Clinical correlation is advised.', '']) : '';
    const terse = profile.startsWith('senior subspecialist');
    const findings = rng.pick(scenario.findings);
    const extras = terse ? '' : rng.pick([' No other findings of note.', ' Incidental small hiatus hernia.', ' No lymphadenopathy.', ' Visualised bones unremarkable.']);
    const written = rng.chance(0.8) ? `${s.scheme} ${scenario.label}` : `${s.scheme} category ${scenario.label}`;
    const impression = `${rng.pick(scenario.impression)}${rng.chance(0.65) ? ` ${written}.` : ''}`;
    const age = rng.int(34, 81);
    const text = [
      `EXAMINATION: ${modality === 'Mammography' ? 'Bilateral mammography' : `${modality} ${EXAM[s.scheme] ?? s.scheme}`}`,
      `CLINICAL INFORMATION: ${age}-year-old ${s.scheme === 'PI-RADS' ? 'man' : s.scheme === 'BI-RADS' || s.scheme === 'O-RADS' ? 'woman' : rng.pick(['man', 'woman'])}. ${scenario.label.startsWith('LR-TR') ? 'Follow-up after microwave ablation of HCC in segment 8.' : rng.pick(s.indication.filter((x) => !x.includes('ablation')))}`,
      `TECHNIQUE: ${s.technique[modality] ?? Object.values(s.technique)[0]}${terse ? '' : ' Comparison: ' + rng.pick(['none available.', 'prior study of last year.', 'outside images reviewed.'])}`,
      `FINDINGS: ${findings}${extras}${hedge}`,
      `IMPRESSION: ${impression}`,
    ].join('\n');
    return {
      text,
      meta: { scheme: s.scheme, modality, profile, complexity: bin(s.cb + s.awd + s.iai), year: 2025 },
      truth: { [`${s.scheme} category`]: scenario.label },
    };
  };
}

function aliases(s: Scheme): Record<string, string> {
  const out: Record<string, string> = {};
  for (const label of s.labels) {
    out[`${s.scheme} ${label}`] = label;
    out[`${s.scheme} category ${label}`] = label;
    out[`category ${label}`] = label;
    if (s.scheme === 'LI-RADS') out[label.replace('LR-', 'LR')] = label;
  }
  return out;
}

export const RADS_CASES: UseCaseGen[] = SCHEMES.map((s) => {
  const tcs = s.cb + s.awd + s.iai;
  const key = `${s.scheme} category`;
  const variable: VarDef = {
    key,
    type: 'CATEGORICAL',
    description: `The final ${s.scheme} category of the report.`,
    instructions: s.guide,
    options: s.labels,
    aliases: aliases(s),
    ...(s.collapse ? { collapseMap: Object.fromEntries(s.labels.map((l) => [l, s.collapse![l] ?? l])) } : {}),
    default: 'Not specified',
    graphStep: 1,
    ira: 0.88,
    difficulty: -0.05 - (tcs - 6) * 0.045,
  };
  return {
    slug: s.slug,
    idPrefix: s.scheme.replace(/-/g, '').toUpperCase(),
    name: `RADS: ${s.title}`,
    description: `RADS category assignment from synthetic English ${s.modalities.join('/')} reports (RADS paper, RXL-RADSet layout). Complexity (Supplementary Table 3): categorisation burden ${s.cb}, workflow depth ${s.awd}, interpretive ambiguity ${s.iai}, total ${tcs}/10. All reports are synthetic.`,
    language: 'en',
    reportType: 'radiology',
    tags: ['radiology', 'RADS', `rads:${s.scheme}`, `complexity:${bin(tcs)}`, `tcs:${tcs}`, ...s.modalities.map((m) => `modality:${m}`), 'synthetic'],
    count: 30,
    variables: [variable],
    system: `You are an expert radiologist assigning ${s.scheme} categories. ${s.guide} Read the whole report; when several findings are described, the final category follows the most suspicious one unless the scheme says otherwise. Output ONLY a JSON object {"${key}": "<category>"} with one category from: ${s.labels.join(', ')}.`,
    task: `Read the report and generate final RADS category based on it. Answer in this exact JSON structure:\n\`\`\`json\n{ ${JSON.stringify(key)}: "" }\n\`\`\``,
    strategies: ['ZERO_SHOT'],
    strategyScale: 1,
    annotators: 2,
    rads: true,
    make: rads(s),
  } as UseCaseGen;
});
