// Bad inputs made from a published JSON Schema: every way to make exactly one field of a valid
// call bad (a wrong type, out of range, too long, a broken pattern or format, text PostgreSQL
// cannot hold, deep nesting, a huge array), to add an unknown field or to drop a required one.
// Used by test/fuzz.test.ts for tool arguments, JSON bodies, query strings and path values.
import fc from 'fast-check'

export interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  items?: Schema
  enum?: unknown[]
  const?: unknown
  anyOf?: Schema[]
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  default?: unknown
}

export type Path = (string | number)[]

/** `events[0].timestamp`: the way error details name a field. */
export const pathText = (path: Path) =>
  path.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${k}` : k), '')

/**
 * How a bad value is bad. `schema`: the published schema refuses it (so a 2xx is a bug, and the
 * error must name the field); `text`: a string the schema allows but PostgreSQL text cannot hold
 * (NUL, a lone surrogate); `semantic`: well-formed but naming nothing the caller may reach
 * (another workspace's project, a time zone that does not exist); `edge`: a number at the edges
 * (1e300, 5e17, Infinity, -1, 0.5) that this schema happens to allow — sent anyway, since the
 * schema may be what is wrong: it may be answered, but never with a 5xx.
 */
export type Badness = 'schema' | 'text' | 'semantic' | 'edge'

export interface BadValue {
  label: string
  value: unknown
  badness: Badness
  /** One more of a kind already covered (a third wrong type, an emoji string as well as a plain one): long runs only. */
  more?: boolean
}

export interface Mutation {
  /** What was done, for failure messages: `page = 1e300`, `- event_id`, `+ zzz`. */
  label: string
  /** The field changed (empty for the whole body). */
  path: Path
  badness: Badness
  value: unknown
}

/** Nested `depth` levels of arrays: past the 64 levels the JSON parsers accept. */
export const deeplyNested = (depth = 70): unknown => {
  let v: unknown = 0
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

const INFINITY = '\u0000gd-fuzz:Infinity\u0000'
const MINUS_INFINITY = '\u0000gd-fuzz:-Infinity\u0000'

/**
 * JSON text of a value, with ±Infinity written as 1e999 and -1e999 (JSON.parse reads them as
 * Infinity: the only way a JSON body carries one). Lone surrogates come out as `\ud800` escapes.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value, (_k, v) => (v === Infinity ? INFINITY : v === -Infinity ? MINUS_INFINITY : v))
  return text === undefined ? '' : text.replaceAll(JSON.stringify(INFINITY), '1e999').replaceAll(JSON.stringify(MINUS_INFINITY), '-1e999')
}

const typesOf = (s: Schema): string[] => {
  if (s.type) return ([] as string[]).concat(s.type)
  if (s.enum) return [...new Set(s.enum.map((v) => (v === null ? 'null' : typeof v)))]
  if (s.anyOf) return [...new Set(s.anyOf.flatMap(typesOf))]
  return []
}

/** One value of every JSON type the schema does not allow. */
function wrongTypes(s: Schema): BadValue[] {
  const allowed = typesOf(s)
  if (allowed.length === 0) return []
  const candidates: [string, unknown][] = [['null', null], ['object', { x: 1 }], ['string', 'x'], ['integer', 7], ['array', ['x']], ['number', 0.5], ['boolean', true]]
  return candidates
    .filter(([type]) => !allowed.includes(type) && !(type === 'integer' && allowed.includes('number')))
    .filter(([type, value]) => !(type === 'number' && allowed.includes('integer') && Number.isInteger(value)))
    .map(([type, value], i) => ({ label: `a ${type}`, value, badness: 'schema' as const, more: i >= 2 }))
}

/** Strings that break a pattern: the first few of a fixed list that the pattern refuses. */
function patternBreakers(pattern: string): string[] {
  const re = new RegExp(pattern, 'u')
  const candidates = ['', ' ', 'A B', 'UPPER', '-x-', '..', '%00', 'a/b', 'é', '<script>', 'x'.repeat(300), 'opp_', 'mem_', 'key_', '1'.repeat(64), 'a\nb']
  return candidates.filter((c) => !re.test(c)).slice(0, 3)
}

/** Values a string of this schema must refuse, and text PostgreSQL cannot store. */
function badStrings(s: Schema): BadValue[] {
  const out: BadValue[] = []
  if (s.enum) {
    const first = String(s.enum[0])
    out.push({ label: 'not one of the values', value: 'no-such-value', badness: 'schema' })
    if (first.toUpperCase() !== first) out.push({ label: 'upper case', value: first.toUpperCase(), badness: 'schema' })
    out.push({ label: 'with a trailing space', value: `${first} `, badness: 'schema', more: true })
    out.push({ label: 'with a NUL', value: `${first}\u0000`, badness: 'schema' })
    return out
  }
  if ((s.minLength ?? 0) >= 1) out.push({ label: 'empty', value: '', badness: 'schema' })
  if (s.maxLength !== undefined) {
    out.push({ label: `${s.maxLength + 1} characters`, value: 'x'.repeat(s.maxLength + 1), badness: 'schema' })
    // maxLength counts code points: one more emoji than allowed is too long, however it is counted.
    out.push({ label: `${s.maxLength + 1} emoji`, value: '😀'.repeat(s.maxLength + 1), badness: 'schema', more: true })
  }
  if (s.pattern) patternBreakers(s.pattern).forEach((v, i) => out.push({ label: `breaks /${s.pattern}/`, value: v, badness: 'schema', more: i >= 2 }))
  if (s.format === 'date-time') {
    ['yesterday', '2026-02-30T25:61:00Z', '+275760-09-13T00:00:00Z', '2026-11-20 09:30', '2026-11-20T09:30:00'].forEach((v, i) => out.push({ label: 'not a date-time', value: v, badness: 'schema', more: i >= 3 }))
  }
  if (s.format === 'uri') for (const v of ['not a uri', 'javascript:alert(1)', 'ftp://example.com/x']) out.push({ label: 'not an http(s) URL', value: v, badness: 'schema' })
  // What the schema cannot say: PostgreSQL text holds no NUL and only well-formed Unicode.
  out.push({ label: 'with a NUL', value: 'a\u0000b', badness: 'text' })
  out.push({ label: 'a lone high surrogate', value: 'a\ud800', badness: 'text' })
  out.push({ label: 'a lone low surrogate', value: '\udc00b', badness: 'text', more: true })
  return out
}

function badNumbers(s: Schema): BadValue[] {
  const out: BadValue[] = []
  const integer = typesOf(s).includes('integer')
  if (s.minimum !== undefined) out.push({ label: `${s.minimum - 1} (below the minimum)`, value: s.minimum - 1, badness: 'schema' })
  if (s.maximum !== undefined) out.push({ label: `${s.maximum + 1} (above the maximum)`, value: s.maximum + 1, badness: 'schema' })
  // Edges that once reached the database as a 500 (an OFFSET past bigint): sent whether or not
  // the schema refuses them, so a missing bound shows up as the 500 it causes.
  const edges: [string, number][] = [['1e300', 1e300], ['5e17', 5e17], ['2^53 + 2', 2 ** 53 + 2], ['Infinity', Infinity], ['-Infinity', -Infinity], ['-1', -1], ['0', 0], ['-1e300', -1e300], ['0.5', 0.5], ['1.5', 1.5]]
  for (const [label, value] of edges) {
    const refused = (integer && value !== Math.trunc(value)) || !Number.isFinite(value) || (s.minimum !== undefined && value < s.minimum) || (s.maximum !== undefined && value > s.maximum)
    if (!out.some((b) => b.value === value)) out.push({ label, value, badness: refused ? 'schema' : 'edge' })
  }
  return out
}

function badArrays(s: Schema, base: unknown): BadValue[] {
  const out: BadValue[] = []
  const items = Array.isArray(base) ? base : []
  const item = items[0] ?? (s.items && typesOf(s.items).includes('string') ? 'x' : 0)
  if ((s.minItems ?? 0) >= 1) out.push({ label: 'empty', value: [], badness: 'schema' })
  if (s.maxItems !== undefined) {
    out.push({ label: `${s.maxItems + 1} items`, value: Array.from({ length: s.maxItems + 1 }, (_, i) => (typeof item === 'string' ? `${item}${i}` : item)), badness: 'schema' })
  }
  if (s.uniqueItems && items.length > 0) out.push({ label: 'the same item twice', value: [item, item], badness: 'schema' })
  return out
}

/** A huge array (far past any maxItems here, well under the 1 MiB body limit), refused by any field that is not an unbounded array. */
const HUGE_ARRAY: BadValue = { label: '20,000 zeros', value: new Array(20_000).fill(0), badness: 'schema' }
const DEEP: BadValue = { label: 'nested 70 deep', value: deeplyNested(), badness: 'schema', more: true }

/** The bad values for one field of this schema (its own constraints, then nesting and size); `thorough` adds more of each kind. */
export function badValues(s: Schema, base?: unknown, thorough = false): BadValue[] {
  const types = typesOf(s)
  const out = [...wrongTypes(s)]
  if (types.includes('string')) out.push(...badStrings(s))
  if (types.includes('integer') || types.includes('number')) out.push(...badNumbers(s))
  if (types.includes('array')) out.push(...badArrays(s, base))
  // In place of an array, a huge one makes the validator look at every item; anywhere else it is a wrong type like any other.
  if (types.includes('array') && s.maxItems !== undefined) out.push(HUGE_ARRAY)
  else if (!types.includes('array')) out.push({ ...HUGE_ARRAY, more: true })
  out.push(DEEP)
  return thorough ? out : out.filter((b) => !b.more)
}

/** The value at `path` replaced (or removed, when `value` is `REMOVE`), on a deep copy. */
export const REMOVE = Symbol('remove')
export function setAt(base: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value
  const copy = structuredClone(base) as Record<string | number, unknown>
  let here = copy
  for (const key of path.slice(0, -1)) here = here[key] as Record<string | number, unknown>
  const last = path[path.length - 1]!
  if (value === REMOVE) delete here[last]
  else here[last] = value
  return copy
}

/**
 * Every single-field mutation of `valid` under `schema`: each property (sent or not) set to
 * each of its bad values, an unknown field added where none is allowed, each required field
 * removed; recursively into objects and into the first item of arrays of objects. `extra`
 * adds semantic bad values by field name (the value that exists in another workspace);
 * `thorough` adds more values of the kinds already covered.
 */
export function mutations(schema: Schema, valid: unknown, options: { extra?: Record<string, BadValue[]>; thorough?: boolean } = {}, path: Path = []): Mutation[] {
  const extra = options.extra ?? {}
  const out: Mutation[] = []
  const props = schema.properties ?? {}
  const here = (valid ?? {}) as Record<string, unknown>
  for (const [name, sub] of Object.entries(props)) {
    const at = [...path, name]
    for (const bad of [...badValues(sub, here[name], options.thorough), ...(extra[name] ?? [])]) {
      out.push({ label: `${pathText(at)} = ${describe(bad)}`, path: at, badness: bad.badness, value: bad.value })
    }
    if (sub.type === 'object' && sub.properties && here[name] !== undefined) out.push(...mutations(sub, here[name], options, at))
    if (sub.type === 'array' && sub.items?.type === 'object' && Array.isArray(here[name]) && here[name].length > 0) {
      out.push(...mutations(sub.items, here[name][0], options, [...at, 0]))
    }
  }
  if (schema.additionalProperties === false) {
    out.push({ label: `+ ${pathText([...path, 'zzz_unknown'])}`, path: [...path, 'zzz_unknown'], badness: 'schema', value: 1 })
  }
  for (const name of schema.required ?? []) {
    out.push({ label: `- ${pathText([...path, name])}`, path: [...path, name], badness: 'schema', value: REMOVE })
  }
  return out
}

function describe(bad: BadValue): string {
  const shown = typeof bad.value === 'string' && bad.value.length <= 24 ? JSON.stringify(bad.value) : bad.label
  return shown === bad.label ? bad.label : `${shown} (${bad.label})`
}

/**
 * A random single-field mutation: a property of the schema (or an unknown one) set to
 * anything — one of its bad values, or an arbitrary JSON value — for longer, random runs.
 * It may happen to be valid: callers assert no 5xx and the error shape, not a 4xx.
 */
export function arbitraryMutation(schema: Schema, valid: unknown): fc.Arbitrary<{ label: string; args: unknown }> {
  const names = Object.keys(schema.properties ?? {})
  const field = names.length > 0 ? fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })) : fc.string({ maxLength: 8 })
  const edge = fc.constantFrom<unknown>(1e300, 5e17, 2 ** 53, -1, 0, 0.5, Infinity, '', '\u0000', 'a\ud800', '\udc00b', 'x'.repeat(5000), 'prj_x', 'opp_x', null, [], {})
  const value = fc.oneof(edge, fc.jsonValue({ maxDepth: 3 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.double(), fc.integer())
  return fc.tuple(field, value).map(([name, v]) => ({ label: `${name} = ${jsonText(v).slice(0, 60)}`, args: setAt(valid, [name], v) }))
}

/** A path or query value as it goes in a URL: lone surrogates as the (invalid) UTF-8 bytes WTF-8 gives them. */
export function urlEncode(value: string): string {
  let out = ''
  for (const ch of value) {
    const code = ch.codePointAt(0)!
    if (code >= 0xd800 && code <= 0xdfff) out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`
    else out += encodeURIComponent(ch)
  }
  return out
}

/** A JSON value as query-string text (an array: the parameter repeated); undefined when it has none. */
export function queryText(value: unknown): string[] | undefined {
  // An empty list has no text in a query string: no parameter is the argument left out (its default).
  if (Array.isArray(value)) return value.length > 0 && value.every((v) => typeof v !== 'object' || v === null) && value.length <= 50 ? value.map(String) : undefined
  if (value !== null && typeof value === 'object') return undefined
  return [String(value)]
}
