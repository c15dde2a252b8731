import fc from 'fast-check';
import { alignQuote, alignQuotes, alignmentIndex, normaliseQuote } from '../../../src/extraction/evidence-alignment';

function one(text: string, quote: string) {
  return alignQuotes(text, [quote])[0]!;
}

describe('evidence alignment (METRICS.md §10)', () => {
  it('finds a verbatim Dutch quote with diacritics at its UTF-16 offsets', () => {
    const text = 'Conclusie: oppervlakkig spreidend melanoom, Breslow-dikte 1,2 mm; patiënt geëxcideerd.';
    const quote = 'Breslow-dikte 1,2 mm';
    const aligned = one(text, quote);
    expect(aligned).toEqual({ quote, status: 'EXACT', start: text.indexOf(quote), end: text.indexOf(quote) + quote.length, text: quote, occurrences: 1 });
  });

  it('finds a Czech quote with changed case and whitespace as NORMALISED, mapped to the original characters', () => {
    const text = 'Závěr:  invazivní   karcinom prsu,\nstupeň 2 (pT2 N0).';
    const aligned = one(text, 'INVAZIVNÍ KARCINOM prsu, stupeň 2');
    expect(aligned.status).toBe('NORMALISED');
    expect(aligned.start).toBe(text.indexOf('invazivní'));
    expect(aligned.end).toBe(text.indexOf('stupeň 2') + 'stupeň 2'.length);
    expect(aligned.text).toBe('invazivní   karcinom prsu,\nstupeň 2');
  });

  it('covers a base letter and its combining accent as one character', () => {
    const text = 'De patie\u0308nt heeft een tumor.';
    const aligned = one(text, 'patiënt'.normalize('NFC'));
    expect(aligned.status).toBe('NORMALISED');
    expect(aligned.start).toBe(3);
    expect(aligned.end).toBe(3 + 'patie\u0308nt'.length);
    expect(aligned.text).toBe('patie\u0308nt');
  });

  it('counts offsets after an emoji in UTF-16 code units and never splits its surrogate pair', () => {
    const text = 'Opmerking 😀 tumor 3 cm, 😀 tumor 4 cm';
    const exact = one(text, 'tumor 3 cm');
    expect(exact.start).toBe(text.indexOf('tumor 3 cm'));
    expect(exact.start).toBe(13);
    const withEmoji = one(text, '😀  TUMOR 4');
    expect(withEmoji.status).toBe('NORMALISED');
    expect(withEmoji.start).toBe(text.lastIndexOf('😀'));
    expect(withEmoji.text).toBe('😀 tumor 4');
    expect(text.slice(withEmoji.start!, withEmoji.end!)).toBe(withEmoji.text);
  });

  it('joins end-of-line hyphenation and removes soft hyphens', () => {
    const text = 'Diagnose: melano-\n  om van de huid; excisie radi\u00ADcaal.';
    const hyphenated = one(text, 'melanoom van de huid');
    expect(hyphenated.status).toBe('NORMALISED');
    expect(hyphenated.text).toBe('melano-\n  om van de huid');
    const soft = one(text, 'excisie radicaal');
    expect(soft.status).toBe('NORMALISED');
    expect(soft.text).toBe('excisie radi\u00ADcaal');
  });

  it('aligns a quote split across a line break', () => {
    const text = 'Resectieranden vrij van\r\ntumor (minimale marge 4 mm).';
    const aligned = one(text, 'vrij van tumor');
    expect(aligned.status).toBe('NORMALISED');
    expect(aligned.text).toBe('vrij van\r\ntumor');
  });

  it('leaves a quote that is not in the text UNALIGNED with no span', () => {
    const aligned = one('Geen afwijkingen in de long.', 'lymfeklier metastase aanwezig');
    expect(aligned).toEqual({ quote: 'lymfeklier metastase aanwezig', status: 'UNALIGNED', start: null, end: null, text: null, occurrences: 0 });
  });

  it('treats a quote that normalises to nothing as UNALIGNED, even when it is a substring', () => {
    expect(one('a \u00AD b', ' \u00AD ').status).toBe('UNALIGNED');
    expect(one('abc', '').status).toBe('UNALIGNED');
  });

  it('finds a slightly wrong quote as FUZZY and maps it back to the original text', () => {
    const text = 'Microscopie: Breslow-dikte 1,2 mm, Clark level IV, geen ulceratie.';
    const aligned = one(text, 'Breslow dikte 1.2 mm');
    expect(aligned.status).toBe('FUZZY');
    expect(aligned.text).toBe('Breslow-dikte 1,2 mm');
    expect(aligned.occurrences).toBe(1);
  });

  it('counts fuzzy occurrences greedily by start, a window starting where the previous one ends included', () => {
    expect(one('abcdefgxabcdefgx', 'abcdefgy')).toMatchObject({ status: 'FUZZY', start: 0, end: 8, occurrences: 2 });
  });

  it('counts overlapping exact occurrences and maps a ligature whole', () => {
    expect(one('xaaay', 'aa')).toMatchObject({ status: 'EXACT', start: 1, occurrences: 2 });
    const ligature = one('de ﬁbrose is ﬁbrose', 'FIBROSE');
    expect(ligature).toMatchObject({ status: 'NORMALISED', start: 3, end: 9, text: 'ﬁbrose', occurrences: 2 });
    expect(normaliseQuote('  Fi\u00ADbro-\nse  ')).toBe('fibrose');
  });

  it('chooses fuzzy windows as a brute force over every window does', () => {
    const letters = fc.constantFrom('a', 'b', 'c', 'd', 'e', ' ');
    const text = fc.array(letters, { minLength: 30, maxLength: 90, size: 'max' }).map((a) => a.join(''));
    // Quotes near a piece of the text (a few edits), and some unrelated ones.
    const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace'), letter: letters });
    const cases = fc.tuple(text, fc.nat(), fc.integer({ min: 6, max: 40 }), fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([t, from, length, edits, unrelated]) => {
      const chars = unrelated ? [...'abcab c'.repeat(6).slice(from % 7, (from % 7) + length)] : [...t.slice(from % (t.length + 1), (from % (t.length + 1)) + length)];
      for (const e of edits) {
        const at = chars.length === 0 ? 0 : e.at % chars.length;
        if (e.kind === 'insert') chars.splice(at, 0, e.letter);
        else if (e.kind === 'delete') chars.splice(at, 1);
        else chars.splice(at, 1, e.letter);
      }
      return [t, chars.join('')] as const;
    });
    let fuzzy = 0;
    fc.assert(
      fc.property(cases, ([t, q]) => {
        const index = alignmentIndex(t);
        const got = alignQuote(index, q);
        const nq = normaliseQuote(q);
        if (nq === '' || t.includes(q) || index.normalised.includes(nq)) return;
        const expected = bruteForceFuzzy(index.normalised, nq);
        if (!expected) {
          expect(got.status).toBe('UNALIGNED');
          return;
        }
        fuzzy += 1;
        expect(got.status).toBe('FUZZY');
        expect([got.start, got.end, got.occurrences]).toEqual([
          index.originStart[expected.start],
          index.originEnd[expected.end - 1],
          expected.occurrences,
        ]);
      }),
      { numRuns: 4000, seed: 20261207 },
    );
    expect(fuzzy).toBeGreaterThan(1000);
  });
});

/** Rule 3 written plainly: every window, a textbook Levenshtein table, exact ratios (ASCII only). */
function bruteForceFuzzy(text: string, quote: string): { start: number; end: number; occurrences: number } | null {
  const m = quote.length;
  const windows: { start: number; end: number; d: number; scale: number }[] = [];
  for (let w = Math.ceil(0.8 * m); w <= Math.floor(1.2 * m); w += 1) {
    for (let s = 0; s + w <= text.length; s += 1) {
      const window = text.slice(s, s + w);
      if (window.startsWith(' ') || window.endsWith(' ')) continue;
      const d = levenshtein(quote, window);
      const scale = Math.max(m, w);
      if (20 * d <= 3 * scale) windows.push({ start: s, end: s + w, d, scale });
    }
  }
  if (windows.length === 0) return null;
  const bestRatio = windows.reduce((best, w) => (w.d * best.scale < best.d * w.scale ? w : best));
  const ties = windows
    .filter((w) => w.d * bestRatio.scale === bestRatio.d * w.scale)
    .sort((a, b) => a.start - b.start || Math.abs(a.end - a.start - m) - Math.abs(b.end - b.start - m) || a.end - b.end);
  let occurrences = 0;
  let free = 0;
  for (const w of ties) {
    if (w.start >= free) {
      occurrences += 1;
      free = w.end;
    }
  }
  return { start: ties[0]!.start, end: ties[0]!.end, occurrences };
}

function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}
