/**
 * Walks the executable schema to build requests for every field, argument, mutation and
 * subscription, so that suites over the whole API (the isolation matrix) cover a new field the
 * day it is added. What the walker cannot build is reported by name, never skipped.
 */
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';

/** A place in a field's arguments that takes an ID: `["input", "store", "datasetId"]`; "[]" marks a list element. */
export interface IdSlot {
  /** Coordinate of the field, e.g. "Mutation.extract" or "UseCase.leaderboard". */
  field: string;
  path: string[];
  /** Where the ID sits: "StartRunInput.useCaseId", or "leaderboard.datasetId" for an argument. */
  key: string;
  /** The node type whose ID belongs here, or "*" for any (`node(id:)`); null when it cannot be told. */
  nodeType: string | null;
}

/** What the walker could not handle; the suite fails with this list. */
export class Unbuildable extends Error {
  constructor(readonly where: string, reason: string) {
    super(`${where}: ${reason}`);
  }
}

export function nodeTypesOf(schema: GraphQLSchema): string[] {
  const node = schema.getType('Node');
  if (!node || !isInterfaceType(node)) throw new Error('the schema has no Node interface');
  return schema.getPossibleTypes(node).map((t) => t.name).sort();
}

/**
 * The node type an ID argument takes, from its name: `datasetId` and `datasetIds` take a
 * Dataset, `referenceAnnotatorId` an Annotator; a bare `id` takes the type its field or input
 * names (`revokeApiKey`'s `RevokeApiKeyInput.id` an ApiKey, `project(id:)` a Project).
 */
export function nodeTypeOfIdName(name: string, owner: string, nodeTypes: readonly string[], explicit: Readonly<Record<string, string>>): string | null {
  const key = `${owner}.${name}`;
  if (explicit[key] !== undefined) return explicit[key];
  const base = name === 'id' ? owner.replace(/Input$/, '') : /.Ids?$/.test(name) ? name.replace(/Ids?$/, '') : null;
  if (base === null) return null;
  const candidates = nodeTypes.filter((t) => base.toLowerCase().endsWith(t.toLowerCase())).sort((a, b) => b.length - a.length);
  return candidates[0] ?? null;
}

function isIdLeaf(type: GraphQLInputType): boolean {
  const named = getNamedType(type);
  return isScalarType(named) && named.name === 'ID';
}

/** Every ID slot in the arguments of `field` (recursing through input objects, cycles cut). */
export function idSlotsOf(
  coordinate: string,
  args: readonly GraphQLArgument[],
  nodeTypes: readonly string[],
  explicit: Readonly<Record<string, string>>,
): IdSlot[] {
  const slots: IdSlot[] = [];
  const fieldName = coordinate.slice(coordinate.indexOf('.') + 1);
  const visit = (type: GraphQLInputType, path: string[], leafName: string, owner: string, seen: Set<string>) => {
    const nullable = getNullableType(type) as GraphQLInputType;
    if (isListType(nullable)) {
      const inner = nullable.ofType as GraphQLInputType;
      if (isIdLeaf(inner)) {
        slots.push({ field: coordinate, path, key: `${owner}.${leafName}`, nodeType: nodeTypeOfIdName(leafName, owner, nodeTypes, explicit) });
        return;
      }
      visit(inner, [...path, '[]'], leafName, owner, seen);
      return;
    }
    if (isIdLeaf(nullable)) {
      slots.push({ field: coordinate, path, key: `${owner}.${leafName}`, nodeType: nodeTypeOfIdName(leafName, owner, nodeTypes, explicit) });
      return;
    }
    if (isInputObjectType(nullable)) {
      if (seen.has(nullable.name)) return;
      const next = new Set(seen).add(nullable.name);
      for (const f of Object.values(nullable.getFields())) visit(f.type, [...path, f.name], f.name, nullable.name, next);
    }
  };
  for (const arg of args) visit(arg.type, [arg.name], arg.name, fieldName, new Set());
  return slots;
}

export interface ValueContext {
  schema: GraphQLSchema;
  /** An ID of the calling project for a node type at `key` ("CancelRunInput.runId"); throws Unbuildable when it has none. */
  ownId(nodeType: string, key: string): string;
  /** A fresh name, so that creating twice never conflicts. */
  unique(where: string): string;
  /** Values that generic generation cannot guess, by input type ("ImportReportsInput") or coordinate ("UseCase.exportConfig.format"). */
  overrides: Readonly<Record<string, (ctx: ValueContext) => unknown>>;
  nodeTypes: readonly string[];
  explicitIdTypes: Readonly<Record<string, string>>;
}

/** A value for a required input (or one asked for by a slot), generated from its type. */
export function valueFor(type: GraphQLInputType, where: string, leafName: string, owner: string, ctx: ValueContext): unknown {
  const override = ctx.overrides[where];
  if (override) return override(ctx);
  const nullable = getNullableType(type) as GraphQLInputType;
  if (isListType(nullable)) return [valueFor(nullable.ofType as GraphQLInputType, `${where}[]`, leafName, owner, ctx)];
  if (isEnumType(nullable)) return nullable.getValues()[0]!.value;
  if (isInputObjectType(nullable)) return requiredFieldsOf(nullable.name, ctx);
  if (isScalarType(nullable)) {
    switch (nullable.name) {
      case 'ID': {
        const nodeType = nodeTypeOfIdName(leafName, owner, ctx.nodeTypes, ctx.explicitIdTypes);
        if (!nodeType || nodeType === '*') throw new Unbuildable(where, 'cannot tell which node type this ID takes: name it in the explicit ID types');
        return ctx.ownId(nodeType, `${owner}.${leafName}`);
      }
      case 'Boolean':
        return false;
      case 'Int':
        return 1;
      case 'Float':
        return 1;
      case 'JSON':
        return {};
      case 'String':
        if (/(^name|Name)$/.test(leafName)) return ctx.unique(where);
        throw new Unbuildable(where, 'a required String the walker cannot guess: add an override');
      default:
        throw new Unbuildable(where, `no generator for scalar ${nullable.name}: add an override`);
    }
  }
  throw new Unbuildable(where, 'unknown input type');
}

/** The required fields (no default) of an input object, plus the type's override (merged over them). */
export function requiredFieldsOf(inputTypeName: string, ctx: ValueContext): Record<string, unknown> {
  const type = ctx.schema.getType(inputTypeName);
  if (!type || !isInputObjectType(type)) throw new Error(`no input type ${inputTypeName}`);
  const typeOverride = ctx.overrides[inputTypeName];
  const base = (typeOverride?.(ctx) ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of Object.values(type.getFields())) {
    if (f.name in base) continue;
    if (!isNonNullType(f.type) || f.defaultValue !== undefined) continue;
    out[f.name] = valueFor(f.type, `${inputTypeName}.${f.name}`, f.name, inputTypeName, ctx);
  }
  return { ...out, ...base };
}

/** The required arguments of a field (and the coordinate's own override). */
export function requiredArgsOf(coordinate: string, args: readonly GraphQLArgument[], ctx: ValueContext): Record<string, unknown> {
  const fieldName = coordinate.slice(coordinate.indexOf('.') + 1);
  const out: Record<string, unknown> = {};
  for (const arg of args) {
    const where = `${coordinate}.${arg.name}`;
    if (ctx.overrides[where]) {
      out[arg.name] = ctx.overrides[where]!(ctx);
      continue;
    }
    if (!isNonNullType(arg.type) || arg.defaultValue !== undefined) continue;
    out[arg.name] = valueFor(arg.type, where, arg.name, fieldName, ctx);
  }
  return out;
}

/**
 * A copy of `args` with `value` at the slot's path; objects on the way are created with their
 * required fields, lists with one element.
 */
export function withSlot(args: Record<string, unknown>, slot: IdSlot, value: string, fieldArgs: readonly GraphQLArgument[], ctx: ValueContext): Record<string, unknown> {
  const root = structuredClone(args);
  const arg = fieldArgs.find((a) => a.name === slot.path[0])!;
  let type: GraphQLInputType = arg.type;
  let holder: Record<string, unknown> | unknown[] = root;
  let key: string | number = slot.path[0]!;
  for (let i = 1; i <= slot.path.length; i++) {
    const nullable = getNullableType(type) as GraphQLInputType;
    if (i === slot.path.length) {
      const isList = isListType(nullable);
      const current = (holder as Record<string | number, unknown>)[key];
      // A list of IDs gets the foreign ID after the own ones, so that mixing is tried too.
      (holder as Record<string | number, unknown>)[key] = isList ? [...(Array.isArray(current) ? current : []), value] : value;
      return root;
    }
    const segment = slot.path[i]!;
    if (segment === '[]') {
      const list = nullable as unknown as { ofType: GraphQLInputType };
      let current = (holder as Record<string | number, unknown>)[key] as unknown[] | undefined;
      if (!Array.isArray(current) || current.length === 0) {
        current = [valueFor(list.ofType, `${slot.field}.${slot.path.slice(0, i).join('.')}[]`, String(key), '', ctx)];
        (holder as Record<string | number, unknown>)[key] = current;
      }
      holder = current;
      key = 0;
      type = list.ofType;
      continue;
    }
    if (!isInputObjectType(nullable)) throw new Error(`slot path ${slot.path.join('.')} crosses a non-object`);
    let current = (holder as Record<string | number, unknown>)[key] as Record<string, unknown> | undefined;
    if (current === undefined || current === null) {
      current = requiredFieldsOf(nullable.name, ctx);
      (holder as Record<string | number, unknown>)[key] = current;
    }
    holder = current;
    key = segment;
    type = nullable.getFields()[segment]!.type;
  }
  return root;
}

/**
 * A selection set over `type` down to `depth` object levels: every field without required
 * arguments, `__typename` everywhere (so no set is empty), each member of an abstract type.
 */
export function selectionOf(type: GraphQLOutputType, depth: number, schema: GraphQLSchema, alias = ''): string {
  const named = getNamedType(type) as GraphQLNamedType;
  if (isScalarType(named) || isEnumType(named)) return '';
  if (isUnionType(named) || isInterfaceType(named)) {
    const members = schema.getPossibleTypes(named);
    if (depth <= 0) return '{ __typename }';
    // Members may share a field name with different types: each member's fields get aliases.
    return `{ __typename ${members.map((m) => `... on ${m.name} ${selectionOf(m, depth, schema, `${m.name}_`)}`).join(' ')} }`;
  }
  const object = named as GraphQLObjectType;
  const parts = ['__typename'];
  for (const field of Object.values(object.getFields())) {
    if (field.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined)) continue;
    const inner = getNamedType(field.type);
    const name = alias ? `${alias}${field.name}: ${field.name}` : field.name;
    if (isScalarType(inner) || isEnumType(inner)) parts.push(name);
    else if (depth > 1) parts.push(`${name} ${selectionOf(field.type, depth - 1, schema)}`);
  }
  return `{ ${parts.join(' ')} }`;
}

export interface Operation {
  query: string;
  variables: Record<string, unknown>;
}

/**
 * `field(args) selection` with the arguments as variables `$v0…` (their values in `variables`),
 * so that values never need escaping into the document.
 */
export function fieldCall(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, selection: string, variables: Record<string, unknown>, definitions: string[]): string {
  const parts: string[] = [];
  for (const arg of field.args) {
    if (!(arg.name in args)) continue;
    const name = `v${definitions.length}`;
    definitions.push(`$${name}: ${String(arg.type)}`);
    variables[name] = args[arg.name];
    parts.push(`${arg.name}: $${name}`);
  }
  return `${field.name}${parts.length ? `(${parts.join(', ')})` : ''} ${selection}`;
}

/** An operation calling `field` of the root type `kind`. */
export function rootOperation(kind: 'query' | 'mutation' | 'subscription', field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, selection: string): Operation {
  const variables: Record<string, unknown> = {};
  const definitions: string[] = [];
  const call = fieldCall(field, args, selection, variables, definitions);
  return { query: `${kind}${definitions.length ? `(${definitions.join(', ')})` : ''} { ${call} }`, variables };
}

/** `node(id: $id) { ... on Type { field(args) selection } }`. */
export function nodeFieldOperation(typeName: string, nodeId: string, field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, selection: string): Operation {
  const variables: Record<string, unknown> = { id: nodeId };
  const definitions: string[] = ['$id: ID!'];
  const call = fieldCall(field, args, selection, variables, definitions);
  return { query: `query(${definitions.join(', ')}) { node(id: $id) { __typename ... on ${typeName} { ${call} } } }`, variables };
}

export function isLeafType(type: GraphQLOutputType): boolean {
  const named = getNamedType(type);
  return isScalarType(named) || isEnumType(named);
}

export function objectTypesOf(schema: GraphQLSchema): GraphQLObjectType[] {
  return Object.values(schema.getTypeMap()).filter((t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith('__'));
}

export function inputObjectTypesOf(schema: GraphQLSchema): GraphQLInputObjectType[] {
  return Object.values(schema.getTypeMap()).filter((t): t is GraphQLInputObjectType => isInputObjectType(t) && !t.name.startsWith('__'));
}
