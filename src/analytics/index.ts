/** Public surface of the pure analytics layer. Each block is owned by one area; add lines, do not reorder. */

// --- values, per-variable metrics, bootstrap, agreement, groups ---
export * from './types';
export * from './errors';
export * from './normalise';
export * from './embedding/embedder';
export * from './embedding/lexical';
export * from './metrics';
export * from './bootstrap';
export * from './agreement';
export * from './groups';
