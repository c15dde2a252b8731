import { ConnectionType } from '../../graphql/connection';
import { Prompt } from './prompt.entity';

export const PromptConnection = ConnectionType(Prompt, 'Prompt');
