import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Embedder, EmbedderId, SimilarityLookup } from '../../analytics/embedding/embedder';
import { similarityFromEmbeddings } from '../../analytics/embedding/embedder';
import { lexicalEmbedderId, lexicalSimilarity } from '../../analytics/embedding/lexical';
import { cellOf, type RecordCell } from '../../analytics/normalise';
import { badInput } from '../../domain/errors';
import { LlmError } from '../../llm/llm-error';
import type { Principal } from '../api-key/principal';
import type { DatasetFrame, RecordRow, RunCells } from './scoring-data';
import type { ResolvedStatsOptions } from './stats-options';

/** Resolves an embedding model (registered on an endpoint) to an Embedder; wired by the endpoint module. */
export type EmbedderResolver = (modelId: string, principal: Principal) => Promise<Embedder>;

/**
 * The similarity of free-text and list values: lexical by default, or from the embeddings of
 * the model the options name, stored by (provider, model, text) so that each text is embedded once.
 */
export class EmbeddingSimilarity {
  constructor(
    private readonly dataSource: DataSource,
    private readonly resolver: EmbedderResolver | null,
  ) {}

  /**
   * Checks what the options refer to before any cached result is served: a cached result must
   * not answer a caller who may not use the embedding model behind it.
   */
  async authorise(principal: Principal, options: ResolvedStatsOptions): Promise<void> {
    if (options.embeddingModelId) {
      if (!this.resolver) throw badInput('No embedding provider is available');
      await this.resolver(options.embeddingModelId, principal);
    }
  }

  /** The similarity of the free-text and list values of these records and run cells. */
  async similarityFor(
    principal: Principal,
    frame: DatasetFrame,
    recordSets: RecordRow[][],
    options: ResolvedStatsOptions,
    runCells: readonly RunCells[] = [],
  ): Promise<{ similarity: SimilarityLookup; embedder: EmbedderId }> {
    if (!options.embeddingModelId) return { similarity: lexicalSimilarity(), embedder: lexicalEmbedderId() };
    if (!this.resolver) throw badInput('No embedding provider is available');
    const embedder = await this.resolver(options.embeddingModelId, principal);
    const texts = new Set<string>();
    const textKeys = frame.specs.filter((s) => s.type === 'FREE_TEXT' || s.type === 'LIST').map((s) => s.key);
    const add = (cell: RecordCell | null | undefined) => {
      if (cell?.status !== 'VALUE') return;
      if (Array.isArray(cell.value)) for (const item of cell.value) texts.add(String(item));
      else texts.add(String(cell.value));
    };
    for (const records of recordSets) for (const record of records) for (const key of textKeys) add(cellOf(record, key));
    for (const cells of runCells) for (const key of textKeys) cells.get(key)?.forEach(add);
    const map = await this.cachedEmbeddings(embedder, [...texts]);
    return { similarity: similarityFromEmbeddings(map), embedder: embedder.id };
  }

  /** Embeddings by (provider, model, text): read from the database, computed only for texts not seen before. */
  private async cachedEmbeddings(embedder: Embedder, texts: string[]): Promise<Map<string, Float32Array>> {
    const { provider, model } = embedder.id;
    const hashOf = (text: string) => createHash('sha256').update(text, 'utf8').digest();
    const hashes = texts.map(hashOf);
    const map = new Map<string, Float32Array>();
    const stored = (await this.dataSource.query(
      'SELECT text_hash, vector FROM embeddings WHERE provider = $1 AND model = $2 AND text_hash = ANY($3)',
      [provider, model, hashes],
    )) as { text_hash: Buffer; vector: Buffer }[];
    const byHash = new Map(stored.map((row) => [row.text_hash.toString('hex'), row.vector]));
    const missing: string[] = [];
    texts.forEach((text, i) => {
      const vector = byHash.get(hashes[i]!.toString('hex'));
      if (vector) map.set(text, new Float32Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength)));
      else missing.push(text);
    });
    if (missing.length > 0) {
      let vectors: Float32Array[];
      try {
        vectors = await embedder.embed(missing);
      } catch (error) {
        if (error instanceof LlmError) {
          throw badInput(`The embedding model ${model} could not embed the texts: ${error.message}`, { field: 'options.embeddingModelId', reason: error.code });
        }
        throw error;
      }
      missing.forEach((text, i) => map.set(text, vectors[i]!));
      for (let i = 0; i < missing.length; i += 1000) {
        const chunk = missing.slice(i, i + 1000);
        await this.dataSource.query(
          `INSERT INTO embeddings (provider, model, text_hash, vector)
           SELECT $1, $2, u.hash, u.vector FROM unnest($3::bytea[], $4::bytea[]) AS u(hash, vector)
           ON CONFLICT DO NOTHING`,
          [provider, model, chunk.map(hashOf), chunk.map((text) => { const v = map.get(text)!; return Buffer.from(v.buffer, v.byteOffset, v.byteLength); })],
        );
      }
    }
    return map;
  }
}
