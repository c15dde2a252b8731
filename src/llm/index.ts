export * from './types';
export * from './llm-error';
export { DEFAULT_RETRY_POLICY, isRetryable, parseRetryAfter, retryDelayMs } from './retry';
export { buildChatBody, createChatClient, type ChatClientOptions } from './chat-client';
export {
  createEmbeddingClient,
  DEFAULT_EMBEDDING_BATCH_SIZE,
  type EmbeddingClient,
  type EmbeddingClientOptions,
} from './embedding-client';
export {
  listModels,
  measureHealth,
  probeJsonSchema,
  probeThinkingToggle,
  type CapabilityProbe,
  type DiscoveredModel,
  type HealthMeasure,
} from './probe';
export { createSecretBox, isSealedSecret, SecretBoxError, type SecretBox, type SecretBoxErrorCode } from './secret-box';
