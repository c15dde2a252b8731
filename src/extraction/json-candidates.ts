/**
 * Finding and repairing JSON objects in model output (docs/scoring.md §3 "Which JSON is the answer").
 *
 * Candidates are the top-level balanced `{…}` objects of the text, found with a brace matcher
 * that skips braces inside strings (double quotes always; single quotes when they open a value
 * or key inside an object, so prose apostrophes do not derail it) and honours backslash escapes.
 * Fenced ``` blocks are scanned separately, so an object left open inside a fence ends at the
 * fence; an object still open at the end of the text (truncated output, an unterminated fence)
 * is a candidate too, marked unclosed.
 */
import { jsonrepair } from 'jsonrepair';

export interface JsonCandidate {
  /** the candidate text, from its `{` to its matching `}` (or the end of its segment) */
  text: string;
  start: number;
  /** the braces balanced */
  closed: boolean;
  /** inside a ``` fence */
  fenced: boolean;
  /**
   * for unclosed candidates: offset (in `text`) of the last comma at the object's top level,
   * -1 if none; text before it holds only complete key/value pairs
   */
  lastTopLevelComma: number;
}

interface Segment {
  start: number;
  end: number;
  fenced: boolean;
}

const FENCE_RE = /```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?/g;

/** Splits the text into alternating outside/inside-fence segments (an unterminated fence runs to the end). */
function segments(text: string): Segment[] {
  const out: Segment[] = [];
  let pos = 0;
  let inFence = false;
  let contentStart = 0;
  FENCE_RE.lastIndex = 0;
  for (let m = FENCE_RE.exec(text); m !== null; m = FENCE_RE.exec(text)) {
    if (!inFence) {
      if (m.index > pos) out.push({ start: pos, end: m.index, fenced: false });
      contentStart = m.index + m[0].length;
      inFence = true;
    } else {
      // a closing fence carries no language tag; "```json" right after content opens nothing new
      out.push({ start: contentStart, end: m.index, fenced: true });
      pos = m.index + 3;
      FENCE_RE.lastIndex = pos;
      inFence = false;
    }
  }
  if (inFence) out.push({ start: contentStart, end: text.length, fenced: true });
  else if (pos < text.length) out.push({ start: pos, end: text.length, fenced: false });
  return out;
}

const VALUE_OPENERS = new Set(['{', '[', ',', ':']);

function scanSegment(text: string, seg: Segment, out: JsonCandidate[]): void {
  let i = seg.start;
  while (i < seg.end) {
    if (text[i] !== '{') {
      i++;
      continue;
    }
    let depth = 0;
    let quote: string | null = null;
    let prevSignificant = '';
    let lastTopComma = -1;
    let j = i;
    let closedAt = -1;
    for (; j < seg.end; j++) {
      const ch = text[j]!;
      if (quote !== null) {
        if (ch === '\\') j++;
        else if (ch === quote) {
          quote = null;
          prevSignificant = ch;
        }
        continue;
      }
      if (ch === '"') quote = '"';
      else if (ch === "'" && VALUE_OPENERS.has(prevSignificant)) quote = "'";
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) {
          closedAt = j;
          break;
        }
      } else if (ch === ',' && depth === 1) lastTopComma = j - i;
      if (!/\s/.test(ch)) prevSignificant = ch;
    }
    if (closedAt >= 0) {
      out.push({
        text: text.slice(i, closedAt + 1),
        start: i,
        closed: true,
        fenced: seg.fenced,
        lastTopLevelComma: -1,
      });
      i = closedAt + 1;
    } else {
      out.push({ text: text.slice(i, seg.end), start: i, closed: false, fenced: seg.fenced, lastTopLevelComma: lastTopComma });
      i = seg.end;
    }
  }
}

/** All candidate objects in order of position. O(length of text). */
export function findJsonCandidates(text: string): JsonCandidate[] {
  const out: JsonCandidate[] = [];
  for (const seg of segments(text)) scanSegment(text, seg, out);
  return out.sort((a, b) => a.start - b.start);
}

const SMART_QUOTES: Record<string, string> = {
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u201f': '"',
  '\u2033': '"',
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
};

/**
 * Pre-processing jsonrepair does not do: removes `#` line comments (Python style) outside
 * strings. String-aware, O(length).
 */
export function stripHashComments(s: string): string {
  let out = '';
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quote !== null) {
      out += ch;
      if (ch === '\\' && i + 1 < s.length) out += s[++i]!;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    if (ch === '#') {
      while (i < s.length && s[i] !== '\n') i++;
      if (i < s.length) out += '\n';
      continue;
    }
    out += ch;
  }
  return out;
}

const BARE_LITERAL_RE = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|True|False|None|NaN|undefined)$/;

/**
 * Second-chance repair: quotes bare values that are not JSON literals, so `"size": 1.5 mm,`
 * becomes `"size": "1.5 mm",` and `"x": 1,5}` (decimal comma) becomes `"x": "1,5"}`. The value
 * text is kept verbatim; normalisation then decides what it is. O(length).
 */
export function quoteBareValues(s: string): string {
  let out = '';
  let quote: string | null = null;
  let i = 0;
  while (i < s.length) {
    const ch = s[i]!;
    if (quote !== null) {
      out += ch;
      if (ch === '\\' && i + 1 < s.length) {
        out += s[i + 1]!;
        i += 2;
        continue;
      }
      if (ch === quote) quote = null;
      i++;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      out += ch;
      i++;
      continue;
    }
    if (ch !== ':') {
      out += ch;
      i++;
      continue;
    }
    out += ch;
    i++;
    let k = i;
    while (k < s.length && (s[k] === ' ' || s[k] === '\t')) k++;
    const first = s[k];
    if (first === undefined || first === '"' || first === "'" || first === '{' || first === '[' || first === '\n') {
      continue;
    }
    // the bare value runs to the next comma followed by a key, a closing brace or a newline
    let end = k;
    while (end < s.length && s[end] !== '}' && s[end] !== '\n') {
      if (s[end] === ',' && !/^\d/.test(s.slice(end + 1, end + 2))) break;
      end++;
    }
    const token = s.slice(k, end).trim();
    if (token === '' || BARE_LITERAL_RE.test(token)) continue;
    out += s.slice(i, k) + JSON.stringify(token);
    i = end;
  }
  return out;
}

export interface ParsedCandidate {
  value: unknown;
  repaired: boolean;
}

function repairOnce(text: string): unknown {
  return JSON.parse(jsonrepair(text)) as unknown;
}

/**
 * Parses a candidate: strict JSON first, then smart quotes normalised, `#` comments removed and
 * jsonrepair (trailing commas, single quotes, Python True/False/None, comments, missing commas,
 * unclosed brackets), then the same after quoting bare values. Returns null when nothing works.
 * When `dropIncompleteTail` is set (an unclosed candidate of a truncated output), the text is
 * first cut back to its last complete top-level pair, so a value the model was still writing
 * ("1" of what would have been "1.5") is not taken as an answer.
 */
export function parseCandidate(
  c: JsonCandidate,
  dropIncompleteTail: boolean,
): { ok: true; parsed: ParsedCandidate } | { ok: false; error: string } {
  let text = c.text;
  if (!c.closed && dropIncompleteTail) {
    text = c.lastTopLevelComma >= 0 ? text.slice(0, c.lastTopLevelComma) + '}' : '{}';
  }
  if (c.closed) {
    try {
      return { ok: true, parsed: { value: JSON.parse(text) as unknown, repaired: false } };
    } catch {
      // fall through to repair
    }
  }
  const pre = stripHashComments(text.replace(/[\u201c\u201d\u201e\u201f\u2033\u2018\u2019\u201a]/g, (q) => SMART_QUOTES[q]!));
  let lastError = 'unparsable';
  for (const attempt of [pre, quoteBareValues(pre)]) {
    try {
      return { ok: true, parsed: { value: repairOnce(attempt), repaired: true } };
    } catch (e) {
      lastError = e instanceof Error ? e.message : String(e);
    }
  }
  return { ok: false, error: lastError };
}
