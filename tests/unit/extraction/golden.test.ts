/**
 * Golden prompt renderings: the exact requests each strategy sends for a fixed use case. A change
 * to prompt assembly shows up as a diff of the committed files. To accept an intended change,
 * run with UPDATE_GOLDEN=1 and review the diff.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runStrategy } from '../../../src/extraction/strategies';
import type { ChatRequest, StrategyContext, StrategyName } from '../../../src/extraction/types';
import { ANSWER_PRIMARY, EXAMPLES, MELANOMA, REPORT, answerFor, scriptedChat, templateKeys } from './support';

const dir = join(__dirname, '../../fixtures/extraction/golden');
const update = process.env['UPDATE_GOLDEN'] === '1';

function serialisable(req: ChatRequest): Omit<ChatRequest, 'signal'> {
  const { signal: _signal, ...rest } = req;
  return rest;
}

interface GoldenCase {
  file: string;
  strategy: StrategyName;
  over: Partial<StrategyContext>;
}

const CASES: GoldenCase[] = [
  { file: 'zero-shot', strategy: 'ZERO_SHOT', over: { sampling: { temperature: 0, topP: 1, topK: 1, maxTokens: 512 }, seed: 42 } },
  { file: 'zero-shot-unguided', strategy: 'ZERO_SHOT', over: { guided: false } },
  { file: 'zero-shot-constrained', strategy: 'ZERO_SHOT', over: { constrained: true, thinking: false } },
  { file: 'one-shot', strategy: 'ONE_SHOT', over: { exampleSelection: { names: ['ex-slnb'] } } },
  { file: 'few-shot', strategy: 'FEW_SHOT', over: { seed: 42 } },
  { file: 'few-shot-merged-user-system', strategy: 'FEW_SHOT', over: { seed: 42, systemMessagesAllowed: false, mergeConsecutiveMessages: true } },
  { file: 'chain-of-thought', strategy: 'CHAIN_OF_THOUGHT', over: { seed: 42, thinking: true } },
  { file: 'self-consistency', strategy: 'SELF_CONSISTENCY', over: { seed: 42, exampleSelection: { count: 1 }, sampling: { temperature: 0.6, topP: 0.95, topK: 50 } } },
  { file: 'prompt-graph', strategy: 'PROMPT_GRAPH', over: { exampleSelection: { names: ['ex-primary'] } } },
];

describe('golden prompt renderings', () => {
  it.each(CASES.map((c) => [c.file, c] as const))('%s', async (_f, c) => {
    const { chat, requests } = scriptedChat((req) => answerFor(req, ANSWER_PRIMARY));
    await runStrategy(c.strategy, { chat, model: 'test-model', variables: MELANOMA, examples: EXAMPLES, report: REPORT, ...c.over });
    const got: unknown =
      c.strategy === 'PROMPT_GRAPH'
        ? Object.fromEntries(
            requests.map((r) => [templateKeys(r).join(' | '), serialisable(r)] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
          )
        : c.strategy === 'SELF_CONSISTENCY'
          ? requests.map(serialisable).sort((a, b) => a.temperature! - b.temperature!)
          : serialisable(requests[0]!);
    const path = join(dir, `${c.file}.json`);
    if (update) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path, JSON.stringify(got, null, 2) + '\n');
    }
    if (!existsSync(path)) throw new Error(`missing golden file ${path}: run with UPDATE_GOLDEN=1`);
    expect(got).toEqual(JSON.parse(readFileSync(path, 'utf8')));
  });
});
