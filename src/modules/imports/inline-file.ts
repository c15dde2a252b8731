import { TEXT_SLICE_CHARS } from './record-stream';

const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

/**
 * How many bytes of `body` from `at` belong to one indivisible unit of a JSON string literal: an
 * escape (`\n`, `\uXXXX`) or one UTF-8 encoded character.
 */
function unitLength(body: Uint8Array, at: number): number {
  const b = body[at]!;
  if (b === BACKSLASH) return body[at + 1] === LETTER_U ? 6 : 2;
  if (b < 0xc0) return 1;
  if (b < 0xe0) return 2;
  return b < 0xf0 ? 3 : 4;
}

/**
 * The largest position ≤ `at` (and > `from`, unless a unit is longer than the space) where the
 * literal `body[from, end)` can be cut: not inside a UTF-8 sequence, not inside an escape.
 * `from` must itself be such a position (an escape run is counted from there).
 */
export function cutPosition(body: Uint8Array, from: number, at: number, end: number): number {
  if (at >= end) return end;
  let b = at;
  while (b > from && (body[b]! & 0xc0) === 0x80) b -= 1;
  // The backslash nearest before b decides: the last of an odd run starts an escape, which
  // may reach over b (at most 6 bytes: \uXXXX); the last of an even run ends an escaped backslash.
  for (let j = b - 1; j >= from && j >= b - 6; j -= 1) {
    if (body[j] !== BACKSLASH) continue;
    let s = j;
    while (s > from && body[s - 1] === BACKSLASH) s -= 1;
    if ((j - s) % 2 === 0 && j + unitLength(body, j) > b) b = j;
    break;
  }
  if (b <= from) b = Math.min(end, from + unitLength(body, from));
  return b;
}

/** The bytes that may follow a backslash in a JSON string: " \ / b f n r t (u is checked apart). */
const SHORT_ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') SHORT_ESCAPES[c.charCodeAt(0)] = 1;

function isHexDigit(b: number | undefined): boolean {
  return b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66));
}

/**
 * Whether the bytes `body[start, end)` (valid UTF-8, between the quotes of a string literal) are
 * a string JSON.parse accepts: no raw control character, and every backslash starting one of
 * JSON's escapes. One pass over the bytes, without decoding them.
 */
export function isJsonStringBody(body: Uint8Array, start: number, end: number): boolean {
  return checkJsonStringBody(body, start, end, end) !== -1;
}

/**
 * {@link isJsonStringBody} a stretch at a time: checks the literal `body[…, end)` from `from`
 * (the start, or where the previous stretch stopped) until at least `stop`, and returns where to
 * go on from (`end` once all is checked; an escape is never cut), or -1 when the bytes checked
 * are not a JSON string's.
 */
export function checkJsonStringBody(body: Uint8Array, from: number, stop: number, end: number): number {
  const last = Math.min(stop, end);
  let i = from;
  for (; i < last; i += 1) {
    const b = body[i]!;
    if (b >= 0x20 && b !== BACKSLASH) continue;
    if (b < 0x20 || i + 1 >= end) return -1;
    const e = body[i + 1]!;
    if (e === LETTER_U) {
      if (i + 5 >= end || !isHexDigit(body[i + 2]) || !isHexDigit(body[i + 3]) || !isHexDigit(body[i + 4]) || !isHexDigit(body[i + 5])) return -1;
      i += 5;
    } else if (SHORT_ESCAPES[e] === 1) {
      i += 1;
    } else {
      return -1;
    }
  }
  return i;
}

/** Bytes of the body per decoded piece: at most this many characters, as the record readers take them. */
export const INLINE_PIECE_BYTES = TEXT_SLICE_CHARS;

/**
 * A file sent inline as a JSON string (`content`) in a large request body, kept as the UTF-8
 * bytes of its string literal in the body instead of as one JS string: a 21 MB body with one
 * character outside Latin-1 would otherwise be held twice more as two-byte strings (the body
 * decoded, then the parsed `content`). {@link pieces} decodes it piece by piece, escapes
 * included, exactly as JSON.parse decodes the whole literal.
 *
 * Made by the JSON body reader (src/http/json-body.ts) for the file fields of import inputs only;
 * the GraphQL argument holds a token naming it (see {@link InlineFiles}).
 */
export class InlineFile {
  /**
   * @param body the request body (UTF-8)
   * @param start the first byte after the literal's opening quote
   * @param end the position of its closing quote
   */
  constructor(
    private readonly body: Buffer,
    private readonly start: number,
    private readonly end: number,
  ) {}

  get byteLength(): number {
    return this.end - this.start;
  }

  /**
   * The text in pieces of at most `bytes` bytes of the literal (so at most that many characters),
   * none ending between the two halves of a surrogate pair, whether the pair was written as two
   * `\uXXXX` escapes or as one four-byte character. A BOM is passed on as any other character.
   * Throws a SyntaxError where the literal is not valid JSON.
   */
  *pieces(bytes: number = INLINE_PIECE_BYTES): Generator<string> {
    let carry = '';
    let from = this.start;
    while (from < this.end) {
      const to = cutPosition(this.body, from, from + bytes, this.end);
      // JSON.parse decodes the escapes natively; each piece ends on a unit boundary, so each is a
      // complete literal of its own.
      let text = carry + (JSON.parse(`"${this.body.toString('utf8', from, to)}"`) as string);
      carry = '';
      const last = text.charCodeAt(text.length - 1);
      if (to < this.end && last >= 0xd800 && last <= 0xdbff) {
        carry = text.slice(-1);
        text = text.slice(0, -1);
      }
      if (text.length > 0) yield text;
      from = to;
    }
    if (carry.length > 0) yield carry;
  }

  /** The whole text as one string (for imports that read the file at once). */
  text(): string {
    return JSON.parse(this.body.toString('utf8', this.start - 1, this.end + 1)) as string;
  }
}

/**
 * The inline files of one HTTP request by the token that stands for each in the GraphQL
 * variables. A token is a string the request body reader made with a random nonce of its own
 * request, so a client cannot write one, and a table belongs to one request's context, so a
 * token means nothing to another request: a string that is not in the table is the file itself.
 */
export type InlineFiles = ReadonlyMap<string, InlineFile>;
