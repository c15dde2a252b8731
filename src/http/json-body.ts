import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { TimeSlices } from '../event-loop';
import { checkJsonStringBody, InlineFile, type InlineFiles } from '../modules/imports/inline-file';
import type { InlineFileVariables } from '../graphql/inline-files';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Which variables of a request may be inline files, from its query and operation name. */
export type InlineFileRule = (query: string, operationName: unknown) => InlineFileVariables;

export interface JsonBodyOptions {
  /** Bodies larger than this are refused (413); checked before reading, from Content-Length. */
  limit: number;
  /** Bodies and string values at least this many bytes long take the large-body path. */
  threshold: number;
  /** Checks the body's bytes before parsing (as express.json's `verify`); throws an error with `status` to refuse it. */
  verify: (req: IncomingMessage, body: Buffer) => void;
  rule: InlineFileRule;
}

/** What express.json answers with: the app's error handler turns `status` into the API's error. */
function parseFailure(message: string): Error {
  return Object.assign(new SyntaxError(message), { status: 400, statusCode: 400, expose: true, type: 'entity.parse.failed' });
}

/** String literals passed, and bytes of a long literal checked, between two chances for other requests to run. */
const LITERALS_PER_STRETCH = 1 << 12;
const BYTES_PER_STRETCH = 1 << 20;

/** How long parsing a large body works before other requests get a turn of the event loop (ms). */
const PARSE_SLICE_MS = 20;

/**
 * The position of the quote closing the string literal whose first byte is `from`, or -1 (one
 * native search per quote: 43 ms past 3 million escaped quotes of a 42 MB literal).
 */
function closingQuote(body: Buffer, from: number): number {
  for (let q = body.indexOf(QUOTE, from); q !== -1; q = body.indexOf(QUOTE, q + 1)) {
    let slashes = 0;
    while (body[q - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return q;
  }
  return -1;
}

/** Whether `body[start, end)` is a JSON string's body (isJsonStringBody), checked a stretch at a time. */
async function isJsonString(body: Buffer, start: number, end: number, slices: TimeSlices): Promise<boolean> {
  for (let at = start; at < end; ) {
    at = checkJsonStringBody(body, at, at + BYTES_PER_STRETCH, end);
    if (at === -1) return false;
    await slices.pause();
  }
  return true;
}

/** Whether the literal ending before `after` is an object key (the next token is a colon). */
function isKey(body: Buffer, after: number): boolean {
  let p = after;
  while (body[p] === 0x20 || body[p] === 0x09 || body[p] === 0x0a || body[p] === 0x0d) p += 1;
  return body[p] === 0x3a;
}

/** A parsed body whose long string values are tokens, and the literal each token stands for. */
export interface LargeJsonBody {
  value: unknown;
  literals: Map<string, { start: number; end: number }>;
}

/**
 * Parses a UTF-8 JSON body as express.json does (a leading BOM skipped, an object or array at
 * the top, JSON.parse's grammar), except that every string value of at least `threshold` bytes
 * is left in the body: it is checked (as JSON.parse would check it) and replaced by a token made
 * with a fresh random nonce, so that no string of the body can be mistaken for one. The body
 * without those literals is parsed by JSON.parse; replacing one string literal by another keeps
 * the document valid exactly when it was. Throws a parse failure (HTTP 400).
 */
export async function parseLargeJson(body: Buffer, threshold: number): Promise<LargeJsonBody> {
  let begin = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  const first = begin;
  while (body[begin] === 0x20 || body[begin] === 0x09 || body[begin] === 0x0a || body[begin] === 0x0d) begin += 1;
  if (body[begin] !== 0x7b && body[begin] !== 0x5b) throw parseFailure('The request body is not a JSON object or array');
  const nonce = randomBytes(16).toString('base64url');
  const literals = new Map<string, { start: number; end: number }>();
  const parts: Buffer[] = [];
  let copied = first;
  const slices = new TimeSlices(PARSE_SLICE_MS);
  // Outside string literals a quote always opens one: jump from literal to literal.
  let passed = 0;
  for (let open = body.indexOf(QUOTE, begin); open !== -1; ) {
    const close = closingQuote(body, open + 1);
    if (close === -1) break;
    if (++passed % LITERALS_PER_STRETCH === 0) await slices.pause();
    if (close - open - 1 >= threshold && !isKey(body, close + 1)) {
      if (!(await isJsonString(body, open + 1, close, slices))) throw parseFailure('A string in the request body is not valid JSON');
      // NUL: the input guard refuses a token that would ever reach a checked string
      const token = `\u0000inline-file:${nonce}:${literals.size}`;
      literals.set(token, { start: open + 1, end: close });
      parts.push(body.subarray(copied, open), Buffer.from(JSON.stringify(token)));
      copied = close + 1;
    }
    open = body.indexOf(QUOTE, close + 1);
  }
  parts.push(body.subarray(copied));
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch {
    throw parseFailure('The request body is not valid JSON');
  }
  return { value, literals };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Puts the text back in place of every token of `parsed` that `rule` does not allow to stay a
 * token, and returns the inline files of those that stay. The query and operation name are
 * themselves put back first (the rule reads them).
 */
export function settleTokens(body: Buffer, parsed: LargeJsonBody, rule: InlineFileRule): InlineFiles {
  const { value, literals } = parsed;
  const textOf = (token: string): string => {
    const { start, end } = literals.get(token)!;
    return new InlineFile(body, start, end).text();
  };
  const kept = new Map<string, InlineFile>();
  let left = literals.size;
  if (isRecord(value)) {
    for (const field of ['query', 'operationName']) {
      const v = value[field];
      if (typeof v === 'string' && literals.has(v)) {
        value[field] = textOf(v);
        left -= 1;
      }
    }
    const variables = value['variables'];
    if (typeof value['query'] === 'string' && isRecord(variables)) {
      const allowed = rule(value['query'], value['operationName']);
      const keep = (v: unknown): void => {
        if (typeof v !== 'string' || !literals.has(v)) return;
        const { start, end } = literals.get(v)!;
        kept.set(v, new InlineFile(body, start, end));
      };
      for (const name of allowed.strings) if (Object.hasOwn(variables, name)) keep(variables[name]);
      for (const [name, field] of allowed.inputs) {
        const input = Object.hasOwn(variables, name) ? variables[name] : undefined;
        if (isRecord(input) && Object.hasOwn(input, field)) keep(input[field]);
      }
    }
  }
  left -= kept.size;
  // Iterative: a deeply nested body must not overflow the stack here (the input guard refuses it later).
  const stack: unknown[] = [value];
  while (left > 0 && stack.length > 0) {
    const holder = stack.pop();
    if (typeof holder !== 'object' || holder === null) continue;
    const record = holder as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const v = record[key];
      if (typeof v === 'string') {
        if (literals.has(v) && !kept.has(v)) {
          record[key] = textOf(v);
          left -= 1;
        }
      } else if (typeof v === 'object' && v !== null) stack.push(v);
    }
  }
  return kept;
}

function charsetOf(req: IncomingMessage): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(String(req.headers['content-type'] ?? ''));
  return match?.[1]?.toLowerCase();
}

/** The body of a request with a known length, into one buffer of that length (no copy of the whole). */
function readBody(req: IncomingMessage, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const body = Buffer.allocUnsafe(length);
    let received = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const fail = (message: string, type: string): void => {
      cleanup();
      reject(Object.assign(new Error(message), { status: 400, statusCode: 400, expose: true, type }));
    };
    const onData = (chunk: Buffer): void => {
      // HTTP framing stops at Content-Length; this cannot overflow, but never write past the buffer.
      if (received + chunk.length > length) return fail('request size did not match content length', 'request.size.invalid');
      chunk.copy(body, received);
      received += chunk.length;
    };
    const onEnd = (): void => {
      cleanup();
      if (received !== length) reject(Object.assign(new Error('request size did not match content length'), { status: 400, statusCode: 400, expose: true, type: 'request.size.invalid' }));
      else resolve(body);
    };
    const onError = (): void => fail('request aborted', 'request.aborted');
    const onClose = (): void => {
      if (received !== length) fail('request aborted', 'request.aborted');
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * The JSON request body of /graphql. A body of at least `threshold` bytes (by its
 * Content-Length, not compressed, UTF-8) is read into one buffer and parsed by
 * {@link parseLargeJson}: the file of an import input sent inline (`content`) then stays in the
 * buffer as an {@link InlineFile}, read piece by piece by the import, and is never one string;
 * every other long string is put back as a string (see {@link settleTokens} and
 * inline-files.ts). The inline files go to `res.locals.inlineFiles` for the GraphQL context.
 * Every other body takes `fallback` (express.json), unchanged.
 */
export function jsonBody(options: JsonBodyOptions, fallback: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const length = Number(req.headers['content-length'] ?? Number.NaN);
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    const charset = charsetOf(req);
    const large =
      req.method === 'POST' &&
      Number.isSafeInteger(length) &&
      length >= options.threshold &&
      length <= options.limit &&
      encoding === 'identity' &&
      (charset === undefined || charset === 'utf-8' || charset === 'utf8') &&
      Boolean(req.is('application/json'));
    if (!large) {
      void fallback(req, res, next);
      return;
    }
    readBody(req, length).then(
      async (body) => {
        let inlineFiles: InlineFiles;
        try {
          options.verify(req, body);
          const parsed = await parseLargeJson(body, options.threshold);
          inlineFiles = settleTokens(body, parsed, options.rule);
          req.body = parsed.value;
        } catch (error) {
          next(error);
          return;
        }
        if (inlineFiles.size > 0) res.locals['inlineFiles'] = inlineFiles;
        next();
      },
      (error: unknown) => next(error),
    );
  };
}
