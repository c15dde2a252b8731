import type { DataSource, EntityManager } from 'typeorm';
import { badInput } from '../../domain/errors';
import { InlineFile } from '../imports/inline-file';
import { isTruncated, type ImportSource } from '../imports/upload';

/** Bytes per stored part: an import's file is written and read back one part at a time. */
export const TASK_FILE_PART_BYTES = 1024 * 1024;

const WELL_FORMED = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

/** A text piece as UTF-8; a lone surrogate has no UTF-8 form and would be changed silently, so it is refused. */
function utf8Of(text: string): Buffer {
  if (!WELL_FORMED(text)) throw badInput('content: the file holds half of a UTF-16 surrogate pair, which is no text', { field: 'content' });
  return Buffer.from(text, 'utf8');
}

async function* bytesOf(source: ImportSource): AsyncGenerator<Uint8Array> {
  if (typeof source === 'string') {
    const step = TASK_FILE_PART_BYTES / 4;
    for (let from = 0; from < source.length; ) {
      let to = Math.min(source.length, from + step);
      // A piece never ends between the halves of a surrogate pair.
      const last = source.charCodeAt(to - 1);
      if (to < source.length && last >= 0xd800 && last <= 0xdbff) to += 1;
      yield utf8Of(source.slice(from, to));
      from = to;
    }
    return;
  }
  if (source instanceof InlineFile) {
    for (const piece of source.pieces(TASK_FILE_PART_BYTES / 4)) yield utf8Of(piece);
    return;
  }
  yield* source;
  if (isTruncated(source)) throw badInput('file: the uploaded file is larger than the server accepts', { field: 'file' });
}

/** Writes the file of an import as parts of the task, in the caller's transaction; returns its size in bytes. */
export async function storeTaskFile(manager: EntityManager, taskId: string, source: ImportSource): Promise<number> {
  let part = 0;
  let size = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const flush = async (): Promise<void> => {
    if (pendingBytes === 0) return;
    await manager.query('INSERT INTO background_task_files (task_id, part, bytes) VALUES ($1, $2, $3)', [taskId, part++, Buffer.concat(pending)]);
    pending = [];
    pendingBytes = 0;
  };
  for await (const chunk of bytesOf(source)) {
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    size += chunk.byteLength;
    if (pendingBytes >= TASK_FILE_PART_BYTES) await flush();
  }
  await flush();
  return size;
}

/** The stored file of a task as the bytes of an upload, read back one part at a time. */
export async function* readTaskFile(dataSource: DataSource, taskId: string): AsyncGenerator<Uint8Array> {
  for (let part = 0; ; part++) {
    const rows = (await dataSource.query('SELECT bytes FROM background_task_files WHERE task_id = $1 AND part = $2', [taskId, part])) as { bytes: Buffer }[];
    if (rows.length === 0) return;
    yield rows[0]!.bytes;
  }
}
