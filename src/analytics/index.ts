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
export * from './grid-input';

// --- rank aggregation, variance partitioning, contrasts ---
export * from './kemeny';
export * from './rank-intervals';
export * from './linear-algebra';
export * from './mixed-model';
export * from './mixed-model-optimiser';
export * from './contrasts';
export * from './contrasts-distributions';
export * from './multiple-testing';
export * from './tolerance';
export * from './pooled';
export * from './chance-agreement';
