import { NUL } from '../../db/storable';

export { NUL, NUL_REASON } from '../../db/storable';

/**
 * Longest name, key or external id accepted. These strings are indexed, and a btree entry
 * over about 2.7 KB fails the insert (54000); 500 characters of UTF-8 stay below that.
 */
export const MAX_NAME_LENGTH = 500;

/** The reason given for a name, key or id over {@link MAX_NAME_LENGTH}. */
export const TOO_LONG_REASON = `is longer than ${MAX_NAME_LENGTH} characters`;

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
