import type { EmbedFn } from '../../llm/types';
import { createChatClient } from '../../llm/chat-client';
import { createEmbeddingClient } from '../../llm/embedding-client';
import type { EgressPolicy } from '../../llm/egress';
import { SecretBoxError, type SecretBox } from '../../llm/secret-box';
import { badInput } from '../../domain/errors';
import { MAX_ENDPOINT_TIMEOUT_MS, type ChatFn } from '../../llm/types';
import type { Endpoint } from './endpoint.entity';

/** At most `limit` calls at once; the others wait in arrival order. */
class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(public limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * Clients for a stored endpoint: its key decrypted only here, in memory, per call site. Every
 * chat call of this process to one endpoint goes through that endpoint's semaphore, so the
 * endpoint never sees more than its maxConcurrency requests from here at once.
 */
export class EndpointConnections {
  private readonly limits = new Map<string, Semaphore>();

  constructor(
    private readonly box: SecretBox,
    /** Where endpoints may point: every connection to an endpoint is checked against it. */
    readonly egress: EgressPolicy,
  ) {}

  seal(apiKey: string): string {
    return this.box.encrypt(apiKey);
  }

  apiKeyOf(endpoint: Endpoint): string | null {
    if (!endpoint.apiKeyEncrypted) return null;
    try {
      return this.box.decrypt(endpoint.apiKeyEncrypted);
    } catch (error) {
      if (error instanceof SecretBoxError) {
        throw badInput(
          `The stored API key of endpoint "${endpoint.name}" cannot be decrypted with this server's SECRET_KEY; give it again with refreshEndpoint(apiKey:)`,
          { reason: error.code },
        );
      }
      throw error;
    }
  }

  chat(endpoint: Endpoint): ChatFn {
    const client = createChatClient({
      baseUrl: endpoint.baseUrl,
      apiKey: this.apiKeyOf(endpoint),
      kind: endpoint.kind,
      timeoutMs: Math.min(endpoint.timeoutMs, MAX_ENDPOINT_TIMEOUT_MS),
      egress: this.egress,
    });
    let semaphore = this.limits.get(endpoint.id);
    if (!semaphore) {
      semaphore = new Semaphore(endpoint.maxConcurrency);
      if (endpoint.id) this.limits.set(endpoint.id, semaphore);
    }
    semaphore.limit = endpoint.maxConcurrency;
    const limiter = semaphore;
    return (request) => limiter.run(() => client(request));
  }

  embed(endpoint: Endpoint, model: string): EmbedFn {
    return createEmbeddingClient({
      baseUrl: endpoint.baseUrl,
      apiKey: this.apiKeyOf(endpoint),
      model,
      timeoutMs: Math.min(endpoint.timeoutMs, MAX_ENDPOINT_TIMEOUT_MS),
      egress: this.egress,
    }).embed;
  }
}
