import {
  getNamedType,
  getOperationAST,
  Kind,
  parse,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ASTNode,
  type GraphQLSchema,
  type TypeNode,
} from 'graphql';
import { FILE_CONTENT } from './input-guard';
import { MAX_QUERY_TOKENS } from './query-cost';

/**
 * Where the variables of one request may hold an import's file: `strings` are variables whose
 * value is the file (`content: $c`), `inputs` variables whose value is an import input object
 * (`input: $input`, the file in its `content` field, named by `field`).
 */
export interface InlineFileVariables {
  strings: ReadonlySet<string>;
  inputs: ReadonlyMap<string, string>;
}

const NONE: InlineFileVariables = { strings: new Set(), inputs: new Map() };

/** The file field of each import input type, by GraphQL type name (type-graphql names a type after its class). */
const FILE_FIELDS = new Map<string, string>([...FILE_CONTENT].map(([cls, field]) => [cls.name, field]));

/** The type of a variable definition when it is a named type, not a list (`String`, `ImportReportsInput!`). */
function namedType(type: TypeNode): string | undefined {
  if (type.kind === Kind.NON_NULL_TYPE) return namedType(type.type);
  return type.kind === Kind.NAMED_TYPE ? type.name.value : undefined;
}

/**
 * The variables of `query`'s operation that are used only as the file of an import input
 * (`content` of ImportReportsInput, ImportAnnotationsInput, ImportPredictionsInput), directly or
 * as the whole input: only those may be kept as bytes of the request body (json-body.ts). A
 * variable used anywhere else as well, in any operation or fragment of the document, is not
 * one: every other place gets a string as always. A document that does not parse has none
 * (Apollo answers its error).
 */
export function inlineFileVariables(schema: GraphQLSchema, query: string, operationName: unknown): InlineFileVariables {
  let document;
  try {
    document = parse(query, { maxTokens: MAX_QUERY_TOKENS });
  } catch {
    return NONE;
  }
  const operation = getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
  if (!operation) return NONE;
  const strings = new Set<string>();
  const inputs = new Map<string, string>();
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = namedType(definition.type);
    if (type === 'String') strings.add(name);
    else if (type !== undefined && FILE_FIELDS.has(type)) inputs.set(name, type);
  }
  if (strings.size === 0 && inputs.size === 0) return NONE;
  const typeInfo = new TypeInfo(schema);
  const refuse = (name: string): void => {
    strings.delete(name);
    inputs.delete(name);
  };
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Variable(node, _key, parent) {
        const name = node.name.value;
        const at = parent as ASTNode | readonly ASTNode[] | undefined;
        if (!at || Array.isArray(at)) return refuse(name);
        const where = at as ASTNode;
        if (where.kind === Kind.VARIABLE_DEFINITION) return undefined;
        if (strings.has(name)) {
          // `content: $c` inside an import input: the field's parent type is the import input
          const parentType = typeInfo.getParentInputType();
          const field = parentType ? FILE_FIELDS.get(getNamedType(parentType).name) : undefined;
          if (where.kind !== Kind.OBJECT_FIELD || field === undefined || where.name.value !== field) refuse(name);
        } else if (inputs.has(name)) {
          const expected = typeInfo.getInputType();
          if (where.kind !== Kind.ARGUMENT || !expected || getNamedType(expected).name !== inputs.get(name)) refuse(name);
        }
        return undefined;
      },
    }),
  );
  return { strings, inputs: new Map([...inputs].map(([name, type]) => [name, FILE_FIELDS.get(type)!])) };
}
