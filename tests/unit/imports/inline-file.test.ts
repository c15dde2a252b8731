import { checkJsonStringBody, cutPosition, InlineFile, isJsonStringBody } from '../../../src/modules/imports/inline-file';
import { parseLargeJson, settleTokens } from '../../../src/http/json-body';
import { createRecordReader, type ParsedRecord, type RowError } from '../../../src/modules/imports';

/**
 * A JSON string literal (without its quotes) mixing every way text can be written in it: short
 * escapes, \uXXXX escapes (a Czech letter, an emoji as an escaped surrogate pair, a lone
 * surrogate), raw two-, three- and four-byte UTF-8, escaped backslashes before a `u` and before
 * a quote, and a BOM.
 */
const TRICKY_LITERAL = String.raw`\uFEFFid,text\r\nR1,\"Česká \u010ce\\u0041 \"q\" \\\"x\\\\\"` + ' 😀 €' + String.raw`\ud83d\ude00\n\t\/\b\f é\uDE00 end\\` + 'ž';

function literalBuffer(literal: string): { body: Buffer; start: number; end: number } {
  const body = Buffer.from(`{"content":"${literal}"}`, 'utf8');
  const start = body.indexOf('"', 11) + 1;
  return { body, start, end: body.length - 2 };
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

describe('InlineFile: a JSON string literal decoded piece by piece', () => {
  const { body, start, end } = literalBuffer(TRICKY_LITERAL);
  const expected = JSON.parse(`"${TRICKY_LITERAL}"`) as string;
  const file = new InlineFile(body, start, end);

  it('decodes the whole literal as JSON.parse does', () => {
    expect(file.text()).toBe(expected);
    expect(isJsonStringBody(body, start, end)).toBe(true);
  });

  it('for every piece size, the pieces join to the text and none ends between the halves of a surrogate pair', () => {
    for (let size = 1; size <= end - start + 1; size += 1) {
      const pieces = [...file.pieces(size)];
      expect(pieces.join('')).toBe(expected);
      pieces.slice(0, -1).forEach((piece) => {
        expect(piece.length).toBeGreaterThan(0);
        expect(isHigh(piece.charCodeAt(piece.length - 1))).toBe(false);
      });
    }
  });

  it('cuts at every position of the literal only between whole escapes and whole characters', () => {
    for (let at = start; at <= end; at += 1) {
      const cut = cutPosition(body, start, at, end);
      expect(cut).toBeGreaterThan(start);
      const head = JSON.parse(`"${body.toString('utf8', start, cut)}"`) as string;
      const tail = JSON.parse(`"${body.toString('utf8', cut, end)}"`) as string;
      expect(head + tail).toBe(expected);
    }
  });

  it('refuses what JSON.parse refuses: raw control characters, bad escapes, a \\u without four hex digits', () => {
    for (const bad of ['a\tb', 'a\\xb', 'a\\u12g4', 'a\\u12', 'a\nb', 'a\\']) {
      const { body: b, start: s, end: e } = literalBuffer(bad);
      expect(isJsonStringBody(b, s, e)).toBe(false);
    }
  });

  it('judges every short string over a tricky alphabet as JSON.parse does', () => {
    const alphabet = ['a', '\\', 'u', 'n', '0', 'F', 'g', '/', '\t', 'é'];
    let level = [''];
    const strings = [''];
    for (let length = 1; length <= 5; length += 1) {
      level = level.flatMap((prefix) => alphabet.map((c) => prefix + c));
      strings.push(...level);
    }
    const disagreements: string[] = [];
    for (const text of strings) {
      const bytes = Buffer.from(text, 'utf8');
      let accepted = true;
      try {
        JSON.parse(`"${text}"`);
      } catch {
        accepted = false;
      }
      if (isJsonStringBody(bytes, 0, bytes.length) !== accepted) disagreements.push(text);
      // Checked a stretch of every length at a time, the verdict is the same.
      for (let stretch = 1; stretch <= 3; stretch += 1) {
        let at = 0;
        while (at !== -1 && at < bytes.length) at = checkJsonStringBody(bytes, at, at + stretch, bytes.length);
        if ((at !== -1) !== accepted) disagreements.push(`${text} in stretches of ${stretch}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('a CSV read from the pieces gives the records of the whole text, the BOM skipped as before', () => {
    const csv = String.raw`\uFEFFid,text\n` + Array.from({ length: 40 }, (_, i) => String.raw`R${i},\"Č${'é'.repeat(i)}\ud83d\ude00 \\ \"\" ${i}\"\n`).join('');
    const { body: b, start: s, end: e } = literalBuffer(csv);
    const read = (pieces: Iterable<string>) => {
      const rows: ParsedRecord[] = [];
      const errors: RowError[] = [];
      const reader = createRecordReader('CSV', { record: (r) => rows.push(r), error: (x) => errors.push(x), reject: (x) => errors.push(x) });
      for (const piece of pieces) reader.write(piece);
      reader.end();
      return { rows, errors };
    };
    const whole = read([JSON.parse(`"${csv}"`) as string]);
    expect(whole.errors).toEqual([]);
    expect(whole.rows).toHaveLength(40);
    expect(whole.rows[0]!.record).toEqual({ id: 'R0', text: 'Č😀 \\ " 0' });
    for (const size of [1, 2, 3, 5, 7, 64]) expect(read(new InlineFile(b, s, e).pieces(size))).toEqual(whole);
  });
});

describe('parseLargeJson and settleTokens', () => {
  const big = 'Česká \\"zpráva\\"\\n😀 '.repeat(20);
  const body = Buffer.from(
    `\uFEFF {"query":"mutation ($c: String!, $n: String!) { a: importReports(input: {datasetId: \\"1\\", format: CSV, content: $c}) { inserted } b: createDataset(input: {useCaseId: \\"1\\", name: $n}) { dataset { id } } }",` +
      `"variables":{"c":"${big}","n":"${big}","${big}":1,"small":"x"}}`,
    'utf8',
  );
  const plain = JSON.parse(body.toString('utf8').slice(1)) as { variables: Record<string, unknown> };

  it('replaces long string values by tokens and parses the rest as JSON.parse would', async () => {
    const parsed = await parseLargeJson(body, 100);
    // the query, c and n
    expect(parsed.literals.size).toBe(3);
    const variables = (parsed.value as { variables: Record<string, unknown> }).variables;
    expect(variables['c']).toMatch(/^\u0000inline-file:/);
    expect(variables['c']).not.toBe(variables['n']);
    // a long key stays a key
    expect(Object.keys(variables)).toEqual(Object.keys(plain.variables));
  });

  it('keeps a token only where the rule allows one; every other one is the string again', async () => {
    const parsed = await parseLargeJson(body, 100);
    const files = settleTokens(body, parsed, () => ({ strings: new Set(['c']), inputs: new Map() }));
    const variables = (parsed.value as { variables: Record<string, unknown> }).variables;
    expect(files.size).toBe(1);
    expect(files.get(variables['c'] as string)!.text()).toBe(plain.variables['c']);
    expect(variables['n']).toBe(plain.variables['n']);
    const none = await parseLargeJson(body, 100);
    expect(settleTokens(body, none, () => ({ strings: new Set(), inputs: new Map() })).size).toBe(0);
    expect(none.value).toEqual(plain);
  });

  it('refuses with HTTP 400 a body that is not JSON, inside or outside a long string, or not an object or array', async () => {
    const bad = [
      body.toString('utf8').replace('"small":"x"', '"small":x'),
      body.toString('utf8').replace('zpráva', 'zpr\tva'),
      body.toString('utf8').replace(/}$/, ''),
      `"${big}"`,
    ];
    for (const text of bad) {
      await expect(parseLargeJson(Buffer.from(text, 'utf8'), 100)).rejects.toEqual(expect.objectContaining({ status: 400, type: 'entity.parse.failed' }));
    }
  });
});
