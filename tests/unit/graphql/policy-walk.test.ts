import { getNamedType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { getMetadataArgsStorage } from 'typeorm';
import { FILE_CONTENT, NAME_FIELDS, NOT_NULL_WHEN_GIVEN, UNGUARDED_NAMES_AND_CONTENTS } from '../../../src/graphql/input-guard';
import { PLAIN_FIELDS_WITH_ARGUMENTS, STATISTICS_FIELDS } from '../../../src/graphql/query-cost';
import { COVERED_NODES, DERIVED_COVERED_FIELDS, ID_ONLY_NODES, PARTLY_COVERED, UNCOVERED_FIELDS } from '../../../src/graphql/response-cache';
import { buildReportQlSchema } from '../../../src/graphql/schema';
import { inputObjectTypesOf, nodeTypesOf, objectTypesOf } from '../../support/schema-walk';

/**
 * Every field and input of the schema has a decision in the three policies that the schema
 * does not show: the cost check, the response cache's invalidation and the input guard. A field
 * added without one fails here, by name.
 */
let schema: GraphQLSchema;

beforeAll(async () => {
  schema = await buildReportQlSchema();
});

const isRoot = (name: string) => name === schema.getMutationType()?.name || name === schema.getSubscriptionType()?.name;

describe('cost check', () => {
  it('prices every field with arguments as statistics, a connection or a plain field', () => {
    const undecided: string[] = [];
    for (const type of objectTypesOf(schema)) {
      if (isRoot(type.name)) continue;
      for (const field of Object.values(type.getFields())) {
        if (field.args.length === 0) continue;
        const coordinate = `${type.name}.${field.name}`;
        const connection = field.args.some((a) => a.name === 'first') && getNamedType(field.type).name.endsWith('Connection');
        if (!STATISTICS_FIELDS.has(field.name) && !connection && !PLAIN_FIELDS_WITH_ARGUMENTS.has(coordinate)) undecided.push(coordinate);
      }
    }
    expect(undecided).toEqual([]);
  });

  it('prices every field that takes statistics options as statistics, and names no field that is gone', () => {
    const fields = objectTypesOf(schema).flatMap((type) => Object.values(type.getFields()).map((field) => ({ type, field })));
    const unpriced = fields
      .filter(({ field }) => field.args.some((a) => getNamedType(a.type).name === 'StatsOptions') && !STATISTICS_FIELDS.has(field.name))
      .map(({ type, field }) => `${type.name}.${field.name}`);
    expect(unpriced).toEqual([]);
    const names = new Set(fields.map(({ field }) => field.name));
    expect([...STATISTICS_FIELDS].filter((name) => !names.has(name))).toEqual([]);
    const coordinates = new Set(fields.map(({ type, field }) => `${type.name}.${field.name}`));
    expect([...PLAIN_FIELDS_WITH_ARGUMENTS].filter((c) => !coordinates.has(c))).toEqual([]);
  });
});

/** The properties of an object type's class that are columns of its entity's table (inherited ones too). */
function columnsOf(typeName: string): Set<string> {
  const objectType = getMetadataStorage().objectTypes.find((o) => o.name === typeName);
  if (!objectType) throw new Error(`no class behind the object type ${typeName}`);
  const target = objectType.target;
  return new Set(
    getMetadataArgsStorage()
      .columns.filter((c) => typeof c.target === 'function' && (c.target === target || target.prototype instanceof c.target))
      .map((c) => c.propertyName),
  );
}

describe('response cache invalidation', () => {
  it('decides every node type: covered, partly covered or id only', () => {
    const decided = (name: string) => COVERED_NODES.has(name) || PARTLY_COVERED[name] !== undefined || ID_ONLY_NODES.has(name);
    expect(nodeTypesOf(schema).filter((name) => !decided(name))).toEqual([]);
    const all = [...COVERED_NODES, ...Object.keys(PARTLY_COVERED), ...ID_ONLY_NODES];
    expect(all.filter((name) => !nodeTypesOf(schema).includes(name))).toEqual([]);
    expect(new Set(all).size).toBe(all.length);
  });

  it('decides every field of a covered object that is not a column of its row', () => {
    const undecided: string[] = [];
    const decisions = new Set([...UNCOVERED_FIELDS, ...DERIVED_COVERED_FIELDS]);
    for (const name of COVERED_NODES) {
      const type = schema.getType(name);
      if (!isObjectType(type)) throw new Error(`${name} is no object type`);
      const columns = columnsOf(name);
      expect(columns.size).toBeGreaterThan(1);
      for (const field of Object.values(type.getFields())) {
        const coordinate = `${name}.${field.name}`;
        if (!columns.has(field.name) && !decisions.has(coordinate)) undecided.push(coordinate);
      }
    }
    expect(undecided).toEqual([]);
  });

  it('names no field that is gone, and none both covered and not', () => {
    const exists = (coordinate: string) => {
      const [typeName, fieldName] = coordinate.split('.') as [string, string];
      const type = schema.getType(typeName);
      return (isObjectType(type) || isInterfaceType(type)) && type.getFields()[fieldName] !== undefined;
    };
    const partly = Object.entries(PARTLY_COVERED).flatMap(([type, fields]) => [...fields].map((field) => `${type}.${field}`));
    expect([...UNCOVERED_FIELDS, ...DERIVED_COVERED_FIELDS, ...partly].filter((c) => !exists(c))).toEqual([]);
    expect([...DERIVED_COVERED_FIELDS].filter((c) => UNCOVERED_FIELDS.has(c))).toEqual([]);
  });
});

describe('input guard', () => {
  /** The GraphQL name of an input class (a class may also be an object type of another name). */
  const inputTypeName = (cls: abstract new (...args: never[]) => object) => {
    const name = getMetadataStorage().inputTypes.find((t) => t.target === cls)?.name;
    if (!name) throw new Error(`${cls.name} is no input type`);
    return name;
  };
  const byName = (decisions: ReadonlyMap<abstract new (...args: never[]) => object, readonly string[] | string>) =>
    [...decisions].flatMap(([cls, fields]) => (typeof fields === 'string' ? [fields] : fields).map((field) => `${inputTypeName(cls)}.${field}`));

  it('decides every name, key and file content of every input', () => {
    const decided = new Set([...byName(NAME_FIELDS), ...byName(FILE_CONTENT), ...Object.keys(UNGUARDED_NAMES_AND_CONTENTS)]);
    const undecided: string[] = [];
    for (const type of inputObjectTypesOf(schema)) {
      for (const field of Object.values(type.getFields())) {
        if (getNamedType(field.type).name !== 'String' || !/^(name|key|content)$|Name$/.test(field.name)) continue;
        if (!decided.has(`${type.name}.${field.name}`)) undecided.push(`${type.name}.${field.name}`);
      }
    }
    expect(undecided).toEqual([]);
  });

  it('names only inputs and fields the schema has', () => {
    const exists = (coordinate: string) => {
      const [typeName, fieldName] = coordinate.split('.') as [string, string];
      return inputObjectTypesOf(schema).some((t) => t.name === typeName && t.getFields()[fieldName] !== undefined);
    };
    const named = [...byName(NAME_FIELDS), ...byName(FILE_CONTENT), ...byName(NOT_NULL_WHEN_GIVEN), ...Object.keys(UNGUARDED_NAMES_AND_CONTENTS)];
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((c) => !exists(c))).toEqual([]);
  });
});
