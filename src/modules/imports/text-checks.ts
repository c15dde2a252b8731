import { NUL } from '../../db/storable';

export { NUL, NUL_REASON } from '../../db/storable';

/**
 * Longest name, key or external id accepted. These strings are indexed, and a btree entry
 * over about 2.7 KB fails the insert (54000); 500 characters of UTF-8 stay below that.
 */
export const MAX_NAME_LENGTH = 500;

/** The reason given for a name, key or id over {@link MAX_NAME_LENGTH}. */
export const TOO_LONG_REASON = `is longer than ${MAX_NAME_LENGTH} characters`;

/** U+FEFF, the byte-order mark: invisible, and removed by `String.prototype.trim`. */
export const BOM = '\ufeff';

/** The reason given for a name, key or id holding a byte-order mark. */
export const BOM_REASON = 'contains a byte-order mark (U+FEFF), an invisible character; remove it';

/**
 * The length of `text` in characters as people count them: Unicode code points, so an emoji or
 * a CJK extension character is one, not the two UTF-16 units `.length` counts.
 */
export function characterCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
    }
    count += 1;
  }
  return count;
}

/**
 * Why a name, key or id cannot be taken as given, or null: a byte-order mark anywhere (trimming
 * would remove a leading one, and the name would silently become another, which may already
 * exist), or more than `max` characters (code points) once trimmed of white space.
 */
export function nameProblem(name: string, max = MAX_NAME_LENGTH): string | null {
  if (name.includes(BOM)) return BOM_REASON;
  if (characterCount(name.trim()) > max) return max === MAX_NAME_LENGTH ? TOO_LONG_REASON : `is longer than ${max} characters`;
  return null;
}

/**
 * Whether a string, or any string or object key inside an array or object, contains a NUL
 * character. Iterative, so a deeply nested JSON value cannot overflow the stack.
 */
export function containsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') {
      if (current.includes(NUL)) return true;
    } else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, item] of Object.entries(current)) {
        if (key.includes(NUL)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

function stripped(value: unknown): unknown {
  if (typeof value === 'string') return value.split(NUL).join('');
  if (Array.isArray(value)) return value.map(stripped);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty keeps a "__proto__" key from the input an own property.
      Object.defineProperty(out, key.split(NUL).join(''), { value: stripped(item), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/**
 * `value` with every NUL character removed from its strings and object keys; the value itself
 * when it holds none (the common case costs one scan and no copy).
 */
export function withoutNul<T>(value: T): T {
  return containsNul(value) ? (stripped(value) as T) : value;
}
