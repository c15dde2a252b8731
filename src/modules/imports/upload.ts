import type { RequestHandler } from 'express';
import { graphqlUploadExpress, GraphQLUpload, Upload, type FileUpload } from 'graphql-upload-minimal';
import { badInput } from '../../domain/errors';
import { InlineFile, type InlineFiles } from './inline-file';

export { GraphQLUpload, type FileUpload };

/**
 * A file to import: the text itself, the text kept as bytes of a large JSON request body (see
 * {@link InlineFile}), or the bytes of an uploaded file as they arrive.
 */
export type ImportSource = string | InlineFile | AsyncIterable<Uint8Array>;

/** The file fields of an import input: the text inline (`content`) or an uploaded file (`file`). */
export interface ImportFileFields {
  content?: string | null;
  file?: Promise<FileUpload> | null;
  /** The file kept by the server (a background task's stored file); no GraphQL field. */
  source?: ImportSource;
}

/**
 * The file of an import: `content` (the text inside the JSON request) or `file` (a GraphQL
 * multipart request's file part, read as it arrives: the file is never held whole). Exactly
 * one of them; otherwise BAD_USER_INPUT naming the field. A `content` that is a token of the
 * request's `inline` files is that file.
 */
export async function importSource(input: ImportFileFields, inline?: InlineFiles): Promise<ImportSource> {
  if (input.source !== undefined) return input.source;
  const hasContent = input.content !== null && input.content !== undefined;
  const hasFile = input.file !== null && input.file !== undefined;
  if (hasContent && hasFile) throw badInput('file: give the file either as content or as an uploaded file, not both', { field: 'file' });
  if (!hasFile) {
    if (!hasContent) throw badInput('content: the file to import is missing (give content, or upload it as file)', { field: 'content' });
    return inline?.get(input.content!) ?? input.content!;
  }
  let upload: FileUpload;
  try {
    upload = await input.file!;
  } catch (error) {
    // The upload library's own messages (file missing, over the size limit, client gone).
    throw badInput(`file: ${error instanceof Error ? error.message : 'the upload failed'}`, { field: 'file' });
  }
  return upload.createReadStream();
}

/** The whole text of an import source (for imports that read the file at once). */
export async function importText(source: ImportSource): Promise<string> {
  if (typeof source === 'string') return source;
  if (source instanceof InlineFile) return source.text();
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const parts: string[] = [];
  let invalid = false;
  for await (const chunk of source) {
    if (invalid) continue;
    try {
      parts.push(decoder.decode(chunk, { stream: true }));
    } catch {
      invalid = true;
    }
  }
  if (!invalid) {
    try {
      parts.push(decoder.decode());
    } catch {
      invalid = true;
    }
  }
  if (invalid) throw badInput('file: the uploaded file is not valid UTF-8', { field: 'file' });
  if (isTruncated(source)) throw badInput('file: the uploaded file is larger than the server accepts', { field: 'file' });
  return parts.join('');
}

/** Whether the multipart parser cut the file at its size limit (busboy marks the stream). */
export function isTruncated(source: ImportSource): boolean {
  return typeof source !== 'string' && !(source instanceof InlineFile) && (source as { truncated?: boolean }).truncated === true;
}

function uploadsIn(value: unknown, found: Upload[], depth = 0): Upload[] {
  if (value instanceof Upload) found.push(value);
  else if (depth < 8 && typeof value === 'object' && value !== null) for (const item of Object.values(value)) uploadsIn(item, found, depth + 1);
  return found;
}

/**
 * GraphQL multipart requests (https://github.com/jaydenseric/graphql-multipart-request-spec)
 * on /graphql: the `operations` and `map` parts become the request body, and each file part
 * reaches its `Upload` variable as a stream, read by the resolver while the request body
 * arrives. Other requests pass through. A file the answer did not read (an error before the
 * import started) is drained once the answer is sent, so that the connection is not left with
 * an unread body.
 */
export function multipartUploads(options: { maxFileSize: number; maxFiles: number }): RequestHandler {
  const parse = graphqlUploadExpress({ maxFileSize: options.maxFileSize, maxFiles: options.maxFiles });
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) return next();
    res.once('close', () => {
      for (const upload of uploadsIn(req.body, [])) {
        upload.promise.then(
          (file) => {
            try {
              file.createReadStream().resume();
            } catch {
              // already read by the import
            }
          },
          () => {},
        );
      }
    });
    parse(req, res, next);
  };
}
