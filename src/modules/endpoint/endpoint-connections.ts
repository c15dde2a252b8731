import type { EmbedFn } from '../../llm/types';
import { createChatClient } from '../../llm/chat-client';
import { createEmbeddingClient } from '../../llm/embedding-client';
import type { SecretBox } from '../../llm/secret-box';
import type { ChatFn } from '../../llm/types';
import type { Endpoint } from './endpoint.entity';

/** Clients for a stored endpoint: its key decrypted only here, in memory, per call site. */
export class EndpointConnections {
  constructor(private readonly box: SecretBox) {}

  seal(apiKey: string): string {
    return this.box.encrypt(apiKey);
  }

  apiKeyOf(endpoint: Endpoint): string | null {
    return endpoint.apiKeyEncrypted ? this.box.decrypt(endpoint.apiKeyEncrypted) : null;
  }

  chat(endpoint: Endpoint): ChatFn {
    return createChatClient({ baseUrl: endpoint.baseUrl, apiKey: this.apiKeyOf(endpoint), kind: endpoint.kind, timeoutMs: endpoint.timeoutMs });
  }

  embed(endpoint: Endpoint, model: string): EmbedFn {
    return createEmbeddingClient({ baseUrl: endpoint.baseUrl, apiKey: this.apiKeyOf(endpoint), model, timeoutMs: endpoint.timeoutMs }).embed;
  }
}
