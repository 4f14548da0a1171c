// The two Ajv instances every surface validates with: strict for JSON bodies and tool
// arguments, coercing for query strings and path parameters (which arrive as text).
import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'

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
