import type { ChatCompletion, ChatFn, ChatRequest, ExtractionVariable, PromptExample } from '../../../src/extraction/types';

export type Reply = string | (Partial<ChatCompletion> & { content: string });

/** A ChatFn that records every request and answers from a script. */
export function scriptedChat(respond: (req: ChatRequest, index: number) => Reply | Promise<Reply>): {
  chat: ChatFn;
  requests: ChatRequest[];
} {
  const requests: ChatRequest[] = [];
  const chat: ChatFn = async (req) => {
    const index = requests.length;
    requests.push(req);
    const r = await respond(req, index);
    const base: ChatCompletion = {
      content: '',
      reasoning: null,
      finishReason: 'stop',
      promptTokens: 100,
      completionTokens: 20,
      latencyMs: 5,
      attempts: 1,
    };
    return typeof r === 'string' ? { ...base, content: r } : { ...base, ...r };
  };
  return { chat, requests };
}

/** The text of the last user message (the final instruction) and of all messages. */
export function allText(req: ChatRequest): string {
  return req.messages.map((m) => m.content).join('\n');
}

/** Which step a prompt-graph request is for: the keys of its JSON template. */
export function templateKeys(req: ChatRequest): string[] {
  const task = req.messages.find((m) => m.content.includes('Extract information'))!.content;
  const json = /```json\n([\s\S]*?)\n```/.exec(task.slice(task.indexOf('Extract information')))![1]!;
  return Object.keys(JSON.parse(json) as Record<string, unknown>);
}

export const MELANOMA: ExtractionVariable[] = [
  {
    key: 'Primary melanoma',
    type: 'CATEGORICAL',
    options: ['Yes', 'No', 'Not specified'],
    default: 'Not specified',
    instructions: 'Determination of whether this is a primary melanoma case.',
    graphStep: 1,
  },
  {
    key: 'Breslow thickness',
    type: 'NUMERIC',
    frameworkType: 'float',
    default: 'Not specified',
    instructions: 'Measured thickness of melanoma in millimeters.\nMust be between 0.0 and 400.0 if specified.',
    graphStep: 2,
    dependsOn: { key: 'Primary melanoma', values: ['Yes'] },
  },
  {
    key: 'Ulceration',
    type: 'BINARY',
    options: ['Yes', 'No'],
    default: 'Not specified',
    description: 'Presence or absence of ulceration.',
    graphStep: 2,
    dependsOn: { key: 'Primary melanoma', values: ['yes'] },
  },
  {
    key: 'Mitosis described',
    type: 'CATEGORICAL',
    options: ['Yes', 'No', 'Not specified'],
    default: 'Not specified',
    graphStep: 2,
    dependsOn: { key: 'Primary melanoma', values: ['Yes'] },
  },
  {
    key: 'Mitosis count',
    type: 'NUMERIC',
    default: 'Not specified',
    instructions: "Number of mitoses per square millimeter.\n- Only applicable if 'Mitosis described' is \"Yes\".",
    graphStep: 3,
    dependsOn: { key: 'Mitosis described', values: ['Yes'] },
  },
  {
    key: 'Specimen type',
    type: 'CATEGORICAL',
    options: ['Both', 'SLNB', 'WLE', 'Not specified'],
    default: 'Not specified',
    instructions: 'Type of specimen when not primary melanoma.',
    graphStep: 4,
    dependsOn: { key: 'Primary melanoma', values: ['No'] },
  },
  {
    key: 'Organs',
    type: 'LIST',
    default: [],
    instructions: 'Organs from which tissue was taken, in the order mentioned.',
    graphStep: 1,
  },
  {
    key: 'Quality Check',
    type: 'FREE_TEXT',
    default: 'No issues detected',
    instructions: 'Flag unclear or contradictory findings.',
    graphStep: 99,
  },
];

function example(name: string, input: string, out: Record<string, unknown>): PromptExample {
  const reasoning = Object.entries(out)
    .map(([k, v]) => `- ${k} - "${name} evidence" implies ${JSON.stringify(v)}`)
    .join('\n');
  return { name, input, reasoning, output: out };
}

export const EXAMPLES: PromptExample[] = [
  example('ex-primary', 'Huidexcisie rug: nodulair melanoom, Breslow 2,1 mm, ulceratie aanwezig.', {
    'Primary melanoma': 'Yes',
    'Breslow thickness': 2.1,
    Ulceration: 'Yes',
    'Mitosis described': 'Yes',
    'Mitosis count': 3,
    'Specimen type': 'Not specified',
    Organs: ['skin'],
    'Quality Check': 'No issues detected',
  }),
  example('ex-slnb', 'Schildwachtklier oksel links: metastase melanoom 0,4 mm.', {
    'Primary melanoma': 'No',
    'Breslow thickness': 'Not specified',
    Ulceration: 'Not specified',
    'Mitosis described': 'Not specified',
    'Mitosis count': 'Not specified',
    'Specimen type': 'SLNB',
    Organs: ['lymph node'],
    'Quality Check': 'No issues detected',
  }),
  example('ex-naevus', 'Huidbiopt: dysplastische naevus, geen melanoom.', {
    'Primary melanoma': 'No',
    'Breslow thickness': 'Not specified',
    Ulceration: 'Not specified',
    'Mitosis described': 'Not specified',
    'Mitosis count': 'Not specified',
    'Specimen type': 'Not specified',
    Organs: ['skin'],
    'Quality Check': 'No issues detected',
  }),
  example('ex-insitu', 'Re-excisie: melanoma in situ, geen invasie.', {
    'Primary melanoma': 'Yes',
    'Breslow thickness': 'Not specified',
    Ulceration: 'No',
    'Mitosis described': 'No',
    'Mitosis count': 'Not specified',
    'Specimen type': 'Not specified',
    Organs: ['skin'],
    'Quality Check': 'In situ lesion: thickness not applicable',
  }),
];

export const REPORT = {
  id: 'report-001',
  text: 'Huidexcisie bovenarm links. Conclusie: nodulair melanoom, Breslow-dikte 1,8 mm, geen ulceratie, 2 mitosen/mm2.',
};

export const ANSWER_PRIMARY = {
  'Primary melanoma': 'Yes',
  'Breslow thickness': 1.8,
  Ulceration: 'No',
  'Mitosis described': 'Yes',
  'Mitosis count': 2,
  'Specimen type': 'Not specified',
  Organs: ['skin'],
  'Quality Check': 'No issues detected',
};

/** A well-formed answer holding only the keys the request asked for. */
export function answerFor(req: ChatRequest, answer: Record<string, unknown>): string {
  const out: Record<string, unknown> = {};
  for (const k of templateKeys(req)) out[k] = answer[k];
  return '<think>reading the report</think>\n```json\n' + JSON.stringify(out) + '\n```';
}
