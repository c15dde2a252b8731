import type { DataSource } from 'typeorm';
import { MAX_PROMPT_EXAMPLES } from '../../extraction/limits';
import { paginate, type PageRequest } from '../../db/pagination';
import { badInput } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import type { Principal } from '../api-key/principal';
import type { UseCaseService } from '../use-case/use-case.service';
import { Variable } from '../use-case/variable.entity';
import type { CreatePromptInput } from './prompt.input';
import { Prompt, type PromptExample } from './prompt.entity';

export class PromptService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly useCases: UseCaseService,
  ) {}

  list(useCaseId: string, args: PageRequest) {
    const query = this.dataSource.getRepository(Prompt).createQueryBuilder('e').where('e.use_case_id = :useCaseId', { useCaseId });
    return paginate(query, args, { column: 'e.created_at', scope: useCaseId, value: (p) => p.createdAt });
  }

  /** Creates the next version of the named prompt; examples (at most 100) must be objects over known keys. */
  async create(principal: Principal, useCaseId: string, input: CreatePromptInput): Promise<Prompt> {
    const useCase = await this.useCases.get(principal, useCaseId, Role.EDITOR);
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    if ((input.examples?.length ?? 0) > MAX_PROMPT_EXAMPLES) {
      throw badInput(`examples: a prompt has at most ${MAX_PROMPT_EXAMPLES} examples`, { field: 'examples' });
    }
    const keys = new Set((await this.dataSource.getRepository(Variable).findBy({ useCaseId: useCase.id })).map((v) => v.key));
    const examples = (input.examples ?? []).map((example, i): PromptExample => {
      if (!example.input.trim()) throw badInput(`examples[${i}].input must not be empty`, { field: `examples[${i}].input` });
      const output = example.output;
      if (typeof output !== 'object' || output === null || Array.isArray(output)) {
        throw badInput(`examples[${i}].output must be a JSON object`, { field: `examples[${i}].output` });
      }
      const unknown = Object.keys(output).filter((k) => !keys.has(k));
      if (unknown.length > 0) {
        throw badInput(`examples[${i}].output has keys that are no variable: ${unknown.join(', ')}`, { field: `examples[${i}].output` });
      }
      return { name: example.name?.trim() || null, input: example.input, reasoning: example.reasoning ?? null, output };
    });
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT id FROM use_cases WHERE id = $1 FOR UPDATE', [useCase.id]);
      const [{ max }] = (await manager.query('SELECT max(version) AS max FROM prompts WHERE use_case_id = $1 AND name = $2', [useCase.id, name])) as [
        { max: number | null },
      ];
      const repo = manager.getRepository(Prompt);
      return repo.save(
        repo.create({
          projectId: useCase.projectId,
          useCaseId: useCase.id,
          name,
          version: (max ?? 0) + 1,
          system: input.system ?? null,
          fieldInstructions: input.fieldInstructions ?? null,
          task: input.task ?? null,
          exampleIntro: input.exampleIntro ?? null,
          final: input.final ?? null,
          examples,
          settings: input.settings ?? {},
        }),
      );
    });
  }
}
