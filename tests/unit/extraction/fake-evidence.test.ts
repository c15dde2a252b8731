import { alignQuotes } from '../../../src/extraction/evidence-alignment';
import { buildMessages } from '../../../src/extraction/prompt-builder';
import type { ExtractionVariable } from '../../../src/extraction/types';
import { fakeQuotes, QUOTE_KINDS, withFakeEvidence } from '../../support/fake-llm/fake-llm-server';

const TEXT =
  'Histology: invasive ductal carcinoma of the left breast, grade 2, measuring 14 mm.\nNo lymphovascular invasion was seen; margins are clear by 3 mm. Oestrogen receptor positive.';
const STATUS = { EXACT: 'EXACT', CASE_AND_SPACE: 'NORMALISED', SLIGHTLY_WRONG: 'FUZZY', INVENTED: 'UNALIGNED' } as const;
const VARS: ExtractionVariable[] = ['a', 'b', 'c', 'd', 'e'].map((key) => ({ key, type: 'FREE_TEXT' }));

describe('the fake server quotes', () => {
  it.each([1, 2, 7, 40])('with seed %i, every kind aligns with the status it stands for', (seed) => {
    const quotes = fakeQuotes(TEXT, ['a', 'b', 'c', 'd', 'e'], seed);
    const kinds = Object.values(quotes).map((list) => list[0]!.kind);
    expect(new Set(kinds)).toEqual(new Set(QUOTE_KINDS));
    for (const [{ quote, kind }] of Object.values(quotes) as [{ quote: string; kind: keyof typeof STATUS }][]) {
      expect(alignQuotes(TEXT, [quote])[0]!.status).toBe(STATUS[kind]);
    }
    expect(fakeQuotes(TEXT, ['a', 'b'], seed)).toEqual(fakeQuotes(TEXT, ['a', 'b'], seed));
  });

  it('adds quotes to an answer only when the prompt asks for evidence', () => {
    const report = { id: 'r', text: TEXT };
    const asked = buildMessages({ variables: VARS, family: 'REASONING', report, evidence: true });
    const plain = buildMessages({ variables: VARS, family: 'REASONING', report });
    const content = '<think>x</think>\n```json\n{"a": "2"}\n```';
    const added = withFakeEvidence(content, {}, asked, 3);
    const answer = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(added)![1]!) as { a: string; evidence: Record<string, string[]> };
    expect(answer.a).toBe('2');
    expect(answer.evidence).toEqual(Object.fromEntries(Object.entries(fakeQuotes(TEXT, ['a', 'b', 'c', 'd', 'e'], 3)).map(([k, l]) => [k, l.map((q) => q.quote)])));
    expect(withFakeEvidence(content, {}, plain, 3)).toBe(content);
    expect(withFakeEvidence('{"a": "2", "evidence": {}}', {}, asked, 3)).toBe('{"a": "2", "evidence": {}}');
  });
});
