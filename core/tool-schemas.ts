// The output schema a tool publishes (MCP `outputSchema`, REST `output_schema`): the operation's
// own output schema, which writes and checks every result, less what only repeats itself. Every
// tool list a client loads into a model's context carries these, so bytes count; a result that
// the full schema accepts is accepted by this one (tests hold every result to the full one).
import type { TSchema } from '@sinclair/typebox'

type Schema = Record<string, unknown>

const isObject = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value)
const isNull = (s: unknown) => isObject(s) && s.type === 'null' && Object.keys(s).length === 1

/** Keywords whose value is one schema, and those whose value maps names (or patterns) to schemas. */
const SUB_SCHEMA = new Set(['items', 'additionalProperties', 'not', 'contains', 'propertyNames'])
const SCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs'])
const SCHEMA_LIST = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems'])
/** Keywords (with a string value) a published output schema leaves out. */
const DROPPED = new Set(['description', 'format', 'pattern'])
/**
 * Marks a sub-schema that only repeats one published beside it in the same output (a
 * comparison's previous period has the period's own shape), naming it: published as its type
 * alone, since JSON Schema could say "the same" only with a `$ref`, which clients handle unevenly.
 */
export const REPEATS = 'x-repeats'

/**
 * - `description`s go: the tool's description says what its result means (an agent reads that
 *   first), and the input schema describes each argument;
 * - `required` goes: every declared property of a result is always written (the serializer
 *   writes the full schema), so the list repeated every property name for nothing;
 * - `format` and `pattern` go: they constrain what the server writes, which the full schema
 *   checks (tests hold every result to it); to a client they only repeat the type's meaning;
 * - `anyOf: [X, {type: 'null'}]` becomes `type: [X's type, 'null']` (the same values; null joins
 *   X's `enum` if it has one);
 * - a sub-schema marked `x-repeats` (REPEATS) is its `type` alone (it admits more, never less).
 */
export function publishedOutputSchema(schema: TSchema): TSchema {
  return compact(schema) as TSchema
}

/**
 * A tool's published annotations: the hints without `title` (the tool's own `title` says it),
 * and for a tool that only reads, only `readOnlyHint` (MCP: `destructiveHint` and
 * `idempotentHint` mean something only when `readOnlyHint` is false).
 */
export function publishedAnnotations(annotations: Annotations): PublishedAnnotations {
  const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = annotations
  return {
    readOnlyHint,
    ...(readOnlyHint ? {} : { destructiveHint, idempotentHint }),
    ...(openWorldHint === undefined ? {} : { openWorldHint }),
  }
}

export interface Annotations {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint?: boolean
}
export type PublishedAnnotations = Pick<Annotations, 'readOnlyHint' | 'openWorldHint'> & Partial<Pick<Annotations, 'destructiveHint' | 'idempotentHint'>>

function compact(schema: unknown): unknown {
  if (!isObject(schema)) return schema
  if (typeof schema[REPEATS] === 'string' && schema.type !== undefined) return { type: schema.type }
  const out: Schema = {}
  for (const [key, value] of Object.entries(schema)) {
    if ((DROPPED.has(key) && typeof value === 'string') || (key === 'required' && Array.isArray(value))) continue
    if (SUB_SCHEMA.has(key)) out[key] = compact(value)
    else if (SCHEMA_MAP.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, compact(s)]))
    else if (SCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map(compact)
    else out[key] = value
  }
  const anyOf = out.anyOf
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNull)) {
    const other = anyOf.find((s) => !isNull(s)) as Schema
    if (typeof other.type === 'string' && other.const === undefined && (other.enum === undefined || Array.isArray(other.enum))) {
      const { anyOf: _, ...rest } = out
      return { ...rest, ...other, type: [other.type, 'null'], ...(Array.isArray(other.enum) ? { enum: [...other.enum, null] } : {}) }
    }
  }
  return out
}
