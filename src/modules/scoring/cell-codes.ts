/**
 * The layout of a run's stored cell columns (run_cell_columns, migration RunCellCodes): its keys,
 * each key's distinct cells (a cell's code is its index) and one byte string holding, key after
 * key, the code of every report ordinal below `span`, big-endian, in as few bytes as the key's
 * cells need (see {@link codeWidth}), the largest value of that width meaning "no cell".
 */
import type { CodedCells } from '../../analytics/grid-input';
import type { RecordCell } from '../../analytics/normalise';

/** One key's distinct cell and the report ordinals whose prediction holds it (4-byte big-endian integers). */
export interface CellGroup {
  key: string;
  cell: RecordCell | null;
  ordinals: Buffer;
}

export interface EncodedRunCells {
  keys: string[];
  /** cells[k]: the distinct cells of keys[k]. */
  cells: (RecordCell | null)[][];
  /** Ordinals covered: one more than the largest ordinal that has a cell (0 without any). */
  span: number;
  codes: Buffer;
}

/** Bytes per code of a key with `distinct` cells: 1 up to 255, 2 up to 65,535, else 4 (the largest value is "no cell"). */
export function codeWidth(distinct: number): 1 | 2 | 4 {
  return distinct <= 0xff ? 1 : distinct <= 0xffff ? 2 : 4;
}

/** The report ordinal at byte `at` of packed ordinals (4-byte big-endian integers, as int4send writes them). */
export function ordinalAt(ordinals: Buffer, at: number): number {
  return (ordinals[at]! << 24) | (ordinals[at + 1]! << 16) | (ordinals[at + 2]! << 8) | ordinals[at + 3]!;
}

/** Where each key's codes begin in the byte string, and its length: keys with `counts[k]` distinct cells over `span` ordinals. */
function codeLayout(counts: readonly number[], span: number): { widths: (1 | 2 | 4)[]; offsets: number[]; bytes: number } {
  const widths = counts.map(codeWidth);
  const offsets: number[] = [];
  let bytes = 0;
  for (const width of widths) {
    offsets.push(bytes);
    bytes += width * span;
  }
  return { widths, offsets, bytes };
}

/**
 * A run's cell groups in the stored layout: keys in code-unit order, each key's cells in the
 * order of its groups. O(keys · span + cells placed).
 */
export function encodeRunCells(groups: readonly CellGroup[]): EncodedRunCells {
  const byKey = new Map<string, CellGroup[]>();
  let span = 0;
  for (const group of groups) {
    let list = byKey.get(group.key);
    if (list === undefined) byKey.set(group.key, (list = []));
    list.push(group);
    const ordinals = group.ordinals;
    for (let at = 0; at + 4 <= ordinals.length; at += 4) {
      const ordinal = ordinalAt(ordinals, at);
      if (ordinal >= span) span = ordinal + 1;
    }
  }
  const keys = [...byKey.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const { widths, offsets, bytes } = codeLayout(
    keys.map((key) => byKey.get(key)!.length),
    span,
  );
  const codes = Buffer.alloc(bytes, 0xff);
  const cells = keys.map((key, k) => {
    const width = widths[k]!;
    const offset = offsets[k]!;
    const list = byKey.get(key)!;
    list.forEach((group, code) => {
      const ordinals = group.ordinals;
      for (let at = 0; at + 4 <= ordinals.length; at += 4) {
        const ordinal = ordinalAt(ordinals, at);
        if (ordinal < 0) throw new Error(`a prediction cell has the negative report ordinal ${ordinal}`);
        const to = offset + ordinal * width;
        if (width === 1) {
          codes[to] = code;
        } else {
          for (let byte = width - 1, rest = code; byte >= 0; byte--, rest >>>= 8) codes[to + byte] = rest & 0xff;
        }
      }
    });
    return list.map((group) => group.cell);
  });
  return { keys, cells, span, codes };
}

/**
 * The columns of `wanted` keys of a stored run, in report order: report i (at ordinal o, where
 * `positionOfOrdinal[o]` = i) gets the code stored for o, −1 where none is or o is past the span.
 * A key not stored has no cell anywhere. O(wanted keys · span).
 * @throws Error when the byte string does not have the length the keys, cells and span give.
 */
export function decodeRunCells(
  stored: EncodedRunCells,
  wanted: readonly string[],
  positionOfOrdinal: Int32Array,
  reports: number,
): Map<string, CodedCells> {
  const { keys, cells, span, codes } = stored;
  const { widths, offsets, bytes } = codeLayout(
    cells.map((list) => list.length),
    span,
  );
  if (keys.length !== cells.length || codes.length !== bytes) {
    throw new Error(`stored cell columns have ${codes.length} bytes of codes for ${keys.length} keys over ${span} ordinals (expected ${bytes})`);
  }
  const indexOf = new Map(keys.map((key, k) => [key, k]));
  const reach = Math.min(span, positionOfOrdinal.length);
  const out = new Map<string, CodedCells>();
  for (const key of wanted) {
    const target = new Int32Array(reports).fill(-1);
    const k = indexOf.get(key);
    if (k === undefined) {
      out.set(key, { cells: [], codes: target });
      continue;
    }
    const width = widths[k]!;
    const offset = offsets[k]!;
    const none = width === 1 ? 0xff : width === 2 ? 0xffff : 0xffffffff;
    const count = cells[k]!.length;
    for (let ordinal = 0; ordinal < reach; ordinal++) {
      const report = positionOfOrdinal[ordinal]!;
      if (report < 0) continue;
      const code = width === 1 ? codes[offset + ordinal]! : codes.readUIntBE(offset + ordinal * width, width);
      if (code === none) continue;
      if (code >= count) throw new Error(`stored cell columns hold code ${code} of a key with ${count} cells`);
      target[report] = code;
    }
    out.set(key, { cells: cells[k]!, codes: target });
  }
  return out;
}
