// The two Ajv instances every surface validates with: strict for JSON bodies and tool
// arguments, coercing for query strings and path parameters (which arrive as text).
import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import fastJson from 'fast-json-stringify'

const base: Options = {
  allErrors: true,
  useDefaults: true,
  removeAdditional: false,
  strict: false,
  // maxLength counts code points (Ajv's default), so 2000 emoji are 2000 characters.
}

function build(options: Options): Ajv {
  const ajv = new Ajv({ ...base, ...options })
  ;(addFormats as unknown as (a: Ajv) => void)(ajv)
  return ajv
}

export const strictAjv = build({ coerceTypes: false })
export const coercingAjv = build({ coerceTypes: 'array' })

// Validators and serializers are compiled by their first call, not at start: the app has about
// 200 of them (every operation's arguments and result, every route's parts and responses), and
// compiling them all took about a fifth of a warm start, for routes a deployment may never see.
// A schema Ajv or fast-json-stringify refuses fails on first use instead (the tests call every
// route and tool).

/** An Ajv validator of `schema`, compiled on its first call. */
export function validatorOf(ajv: Ajv, schema: object): ValidateFunction {
  let compiled: ValidateFunction | undefined
  const get = () => (compiled ??= ajv.compile(schema))
  const validate = ((data: unknown, cxt?: Parameters<ValidateFunction>[1]) => {
    const fn = get()
    const valid = fn(data, cxt)
    validate.errors = fn.errors
    return valid
  }) as ValidateFunction
  // Fastify hands the parent object to a validator that has a schemaEnv, as Ajv's have, so Ajv
  // can replace a root value (defaults, coercion): reading it compiles.
  Object.defineProperty(validate, 'schemaEnv', { get: () => get().schemaEnv })
  return validate
}

/** fast-json-stringify's serializer of `schema` (writes only what the schema declares), compiled on its first call. */
export function serializerOf(schema: object): (value: unknown) => string {
  let compiled: ((value: unknown) => string) | undefined
  return (value) => (compiled ??= fastJson(schema as never))(value)
}

/** How deep JSON may nest: far beyond any argument here, and short of any stack. */
export const MAX_JSON_DEPTH = 64

/** True when the value nests objects and arrays deeper than `max` (checked without recursion). */
export function nestsDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth > max) return true
    for (const child of Object.values(v)) stack.push([child, depth + 1])
  }
  return false
}
